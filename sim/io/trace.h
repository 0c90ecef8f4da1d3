#pragma once
// Chrome trace event JSON (the format Perfetto and chrome://tracing open) of a simulation
// (docs/model.md, "Command line and JSON", `--trace`).
#include "sim/metrics.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <string>
#include <string_view>

namespace ppsim {

/// The trace of `simulation`: one process per device ("device g") with a "compute" track of
/// `X` events (args kind, stage, microbatch), "send" tracks with the point-to-point transfers
/// the device sends that take time (overlapping ones go to further lanes "send 2", ...), and
/// `C` counter events "activations" (and "bytes" when the byte model is tracked) from the
/// memory timelines.
/// Times are in microseconds, converted from the scenario's `time_unit` ("s", "ms" or "us", as
/// ScenarioInput::time_unit). Memory counters and send tracks need a simulation run with
/// SimulateOptions{true}; without timelines they are omitted.
std::string chrome_trace_json(const Scenario &scenario, const Schedule &schedule,
                              const Simulation &simulation, std::string_view time_unit = "ms");

} // namespace ppsim
