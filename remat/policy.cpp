#include "remat/policy.h"

#include "sim/io/text_file.h"

#include "remat/baselines.h"
#include "sim/error.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace ppsim {

PolicyRun apply_remat_policy(const ScenarioInput &input, const Scenario &scenario,
                             const Schedule &base, const std::string &policy,
                             const IlpOptions &ilp) {
  if (policy == "none")
    return {scenario, base};
  if (policy == "full")
    return {scenario, apply_plan(base, full_forward_plan(scenario))};
  if (policy == "selective") {
    Scenario selective = selective_scenario(input, scenario, {});
    Schedule schedule = apply_plan(base, selective_plan(selective));
    return {std::move(selective), std::move(schedule)};
  }
  if (policy == "ilp") {
    RematSolution solution = solve_stage_remat(scenario, base, ilp);
    if (!solution.found())
      throw Error(fmt::format("no remat plan for schedule '{}': {}", base.name, solution.failure));
    return {scenario, std::move(solution.schedule)};
  }
  constexpr std::string_view kFile = "file:";
  if (policy.starts_with(kFile)) {
    const std::string path = policy.substr(kFile.size());
    return {scenario, apply_plan(base, parse_plan_csv(read_text_file(path, "remat plan file"), path,
                                                      scenario.stage_count(), scenario.microbatches))};
  }
  throw Error(fmt::format(
      "unknown remat policy '{}' (expected none, full, selective, ilp or file:PATH)", policy));
}

} // namespace ppsim
