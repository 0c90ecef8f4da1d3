#include "remat/policy.h"

#include "remat/baselines.h"
#include "sim/error.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace ppsim {

Schedule apply_remat_policy(const Scenario &scenario, const Schedule &base,
                            const std::string &policy, const IlpOptions &ilp) {
  if (policy == "none")
    return base;
  if (policy == "full")
    return apply_plan(base, full_forward_plan(scenario));
  if (policy == "ilp")
    return solve_stage_remat(scenario, base, ilp).schedule;
  constexpr std::string_view kFile = "file:";
  if (policy.starts_with(kFile)) {
    const std::string path = policy.substr(kFile.size());
    std::ifstream file(path);
    if (!file)
      throw Error(fmt::format("cannot read remat file '{}'", path));
    std::stringstream text;
    text << file.rdbuf();
    return apply_plan(
        base, parse_plan_csv(text.str(), path, scenario.stage_count(), scenario.microbatches));
  }
  throw Error(
      fmt::format("unknown remat policy '{}' (expected none, full, ilp or file:PATH)", policy));
}

} // namespace ppsim
