#include "run/policy.h"

#include "base/text_file.h"

#include "base/error.h"
#include "remat/baselines.h"
#include "remat/stage_checkpoint.h"
#include "run/model_costs.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace ppsim {

Scenario scenario_with_remat_levels(const RunInput &input, const Scenario &scenario) {
  if (input.remat_checkpoint_levels == 0)
    return with_selective_level(input, scenario);
  if (input.costs_files.empty())
    input.fail("remat.checkpoint_levels", kLevelsNeedCostFile);
  const std::shared_ptr<const CostFile> file = run_costs(input);
  const double ticks_per_ms =
      static_cast<double>(scenario.time_scale.ticks_per_unit) * units_per_second(input) / 1e3;
  try {
    return with_selective_level(
        input, with_checkpoint_levels(scenario, stage_layers(*file, scenario.stage_layers),
                                      input.remat_checkpoint_levels, ticks_per_ms));
  } catch (const Error &error) {
    input.fail("remat.checkpoint_levels",
               fmt::format("{} in {}", error.sentence(), costs_source(input)));
  }
}

void check_policy_name(const std::string &policy) {
  if (policy == "none" || policy == "full" || policy == "selective" || policy == "ilp" ||
      policy.starts_with("file:")) {
    return;
  }
  throw Error(fmt::format(
      "unknown remat policy '{}' (expected none, full, selective, ilp or file:PATH)", policy));
}

IlpOptions ilp_options(const RunInput &input) {
  IlpOptions ilp;
  ilp.time_limit_seconds = input.remat_time_limit_seconds;
  ilp.relative_gap = input.remat_relative_gap;
  ilp.node_limit = input.remat_node_limit;
  return ilp;
}

PolicyRun apply_remat_policy(const RunInput &input, const Scenario &scenario,
                             const Schedule &base, const std::string &policy,
                             const IlpOptions &ilp) {
  check_policy_name(policy);
  if (policy == "none")
    return {scenario, base, ""};
  if (policy == "full")
    return {scenario, apply_plan(base, full_forward_plan(scenario, base)), ""};
  if (policy == "selective") {
    // A cost file that does not measure it has zeros there: no free recomputation.
    if (!input.costs_files.empty() && !input.measures_selective()) {
      throw Error(fmt::format("the costs of {} measure no selective recomputation "
                              "(recompute_selective_ms, activation_bytes_selective)",
                              costs_source(input)));
    }
    // Measured selective recomputation runs as a level of every (s,j), so that its plan is a
    // plan file like any other (docs/remat.md, "Checkpoint levels"); the same replay otherwise.
    Scenario leveled = with_selective_level(input, scenario);
    if (const std::optional<RematPlan> plan = selective_level_plan(leveled))
      return {std::move(leveled), apply_plan(base, *plan), ""};
    Scenario selective = selective_scenario(input, scenario, {});
    Schedule schedule = apply_plan(base, selective_plan(selective));
    return {std::move(selective), std::move(schedule), ""};
  }
  if (policy == "ilp") {
    Scenario leveled = scenario_with_remat_levels(input, scenario);
    RematSolution solution = solve_stage_remat(leveled, base, ilp);
    if (!solution.found())
      throw Error(fmt::format("no remat plan for schedule '{}': {}", base.name, solution.failure));
    return {std::move(leveled), std::move(solution.schedule), solution.status_label()};
  }
  // file:PATH. A plan may name checkpoint levels (level:K, with remat.checkpoint_levels) and
  // selective recomputation per (s,j) (where the cost file measures it).
  Scenario leveled = scenario_with_remat_levels(input, scenario);
  const std::string path = policy.substr(std::string_view("file:").size());
  Schedule schedule = apply_plan(
      base, parse_plan_csv(read_text_file(path, "remat plan file"), path, leveled.stage_count(),
                           leveled.microbatches, leveled.selective_levels()));
  return {std::move(leveled), std::move(schedule), ""};
}

} // namespace ppsim
