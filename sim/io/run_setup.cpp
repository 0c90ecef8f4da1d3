#include "sim/io/run_setup.h"

#include "sim/error.h"
#include "sim/io/torch_csv.h"
#include "sim/validate.h"

#include <fmt/format.h>

namespace ppsim {
namespace {

PreparedRun import_run(const ScenarioInput &input) {
  ImportedSchedule imported = read_torch_csv(input.schedule_file);
  ScenarioInput adjusted = input;
  adjusted.devices = imported.schedule.device_count();
  if (input.origins.count("cluster.devices") && input.devices != adjusted.devices) {
    input.fail("cluster.devices", fmt::format("the schedule file has {} device rows, not {}",
                                              adjusted.devices, input.devices));
  }
  // m is 1 + the largest microbatch id unless the user gave it (spec schedules.md 14).
  if (!input.origins.count("pipeline.microbatches")) adjusted.microbatches = imported.microbatches;
  PreparedRun run{build_scenario_on(adjusted, imported.placement, imported.chunks, 1),
                  std::move(imported.schedule), {}};
  if (!imported.dropped.empty()) {
    run.warnings.push_back(fmt::format("ignored non-compute actions: {}", fmt::join(imported.dropped, ", ")));
  }
  validate_schedule(run.scenario, run.schedule, ScheduleOrigin{input.schedule_file, 1});
  return run;
}

} // namespace

PreparedRun prepare_run(const ScenarioInput &input) {
  if (!input.schedule_file.empty()) return import_run(input);
  const ScheduleInfo *info = nullptr;
  try {
    info = &find_schedule(input.schedule);
  } catch (const Error &error) {
    input.fail("pipeline.schedule", error.sentence());
  }
  PreparedRun run;
  run.scenario = build_scenario(input, *info);
  run.schedule = generate_schedule(*info, run.scenario, GeneratorOptions{input.group_size});
  validate_schedule(run.scenario, run.schedule);
  return run;
}

} // namespace ppsim
