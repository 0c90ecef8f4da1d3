#include "run/remat_table.h"

#include "remat/plan.h"
#include "run/policy.h"
#include "run/prepare.h"
#include "sim/io/report.h"

#include <fmt/format.h>

#include <algorithm>

namespace ppsim {

RematTable remat_table(const RunInput &input, const IlpOptions &ilp,
                       std::chrono::steady_clock::time_point started) {
  const PreparedRun run = prepare_run(input);
  RematTable table;
  table.schedule_name = run.schedule.name;
  table.form = ilp.form;
  // The elf form has no levels: there selective recomputation stays a baseline of its own (and
  // asked-for checkpoint levels are refused by the model, naming the form).
  table.scenario = ilp.form == IlpForm::elf && run.input.remat_checkpoint_levels == 0
                       ? run.scenario
                       : scenario_with_remat_levels(run.input, run.scenario);
  capped_track(table.scenario); // a cap is required before anything runs
  check_stage_remat_size(table.scenario, run.schedule, ilp.form);
  table.baselines = run_baselines(run.input, table.scenario, run.schedule);
  IlpOptions remaining = ilp;
  remaining.time_limit_seconds = std::max(
      0.0, ilp.time_limit_seconds -
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  table.optimum = solve_stage_remat(table.scenario, run.schedule, remaining);
  // The elf form solves and replays the split base with lumped timing (docs/remat.md, "The ILP
  // (ppsim form)").
  table.solved = form_instance(table.scenario, run.schedule, ilp.form);
  return table;
}

double largest_peak(const Scenario &scenario, const Schedule &schedule) {
  const std::vector<double> peaks = device_peaks(scenario, schedule, capped_track(scenario));
  return peaks.empty() ? 0.0 : *std::max_element(peaks.begin(), peaks.end());
}

namespace {

std::string plan_json(const std::string &policy, const std::string &status,
                      const Scenario &scenario, const RematPlan &plan, const Schedule &schedule,
                      const Simulation &simulation, const std::string &extra = "") {
  const TimeScale &scale = scenario.time_scale;
  return fmt::format("{{\"policy\": {}, \"status\": {}, \"max_span\": {}, \"makespan\": {}, "
                     "\"peak\": {}, \"R\": {}, \"RW\": {}, \"RBW\": {}{}}}",
                     json_string(policy), json_string(status),
                     json_number(scale.to_units(simulation.metrics.max_span)),
                     json_number(scale.to_units(simulation.metrics.makespan)),
                     json_number(largest_peak(scenario, schedule)), plan.forward_count(),
                     plan.weight_input_count(), plan.full_backward_count(), extra);
}

std::string unplanned_json(const std::string &policy, std::string_view status,
                           const std::string &note) {
  return fmt::format("{{\"policy\": {}, \"status\": {}, \"note\": {}}}", json_string(policy),
                     json_string(status), json_string(note));
}

} // namespace

std::string remat_table_json(const RematTable &table) {
  std::vector<std::string> rows;
  for (const RematOutcome &o : table.baselines) {
    rows.push_back(o.found ? plan_json(o.policy,
                                       o.simulation.metrics.feasible ? "fits" : "over cap",
                                       o.scenario, o.plan, o.schedule, o.simulation)
                           : unplanned_json(o.policy, "no plan", o.note));
  }
  const RematSolution &optimum = table.optimum;
  const Scenario &solved = table.solved.scenario;
  if (optimum.found()) {
    const double ticks_per_unit = static_cast<double>(solved.time_scale.ticks_per_unit);
    rows.push_back(plan_json(
        table.ilp_name(), optimum.status_label(), solved, optimum.plan, optimum.schedule,
        optimum.simulation,
        fmt::format(", \"objective\": {}, \"bound\": {}, \"seconds\": {}, \"start_plan_kept\": {}, "
                    "\"stopped_by\": {}",
                    json_number(optimum.objective / ticks_per_unit),
                    json_number(optimum.best_bound / ticks_per_unit),
                    json_number(optimum.seconds), optimum.from_start ? "true" : "false",
                    optimum.limit == solver::Limit::none
                        ? "null"
                        : json_string(solver::limit_name(optimum.limit)))));
  } else {
    rows.push_back(
        unplanned_json(table.ilp_name(), solver::status_name(optimum.status), optimum.failure));
  }
  const std::optional<double> &cap = capped_track(solved).cap;
  return fmt::format(
      "{{\"schedule\": {}, \"p\": {}, \"m\": {}, \"v\": {}, \"cap\": {}, \"memory_model\": {}, "
      "\"timing\": {}, \"ilp_form\": {}, \"policies\": [{}]}}\n",
      json_string(table.schedule_name), solved.devices, solved.total_microbatches(), solved.chunks,
      cap ? json_number(*cap) : "null", json_string(memory_model_name(solved.memory_model)),
      json_string(solved.remat_timing == RematTiming::early ? "early" : "lumped"),
      json_string(table.form == IlpForm::elf ? "elf" : "ppsim"), fmt::join(rows, ", "));
}

} // namespace ppsim
