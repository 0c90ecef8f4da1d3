#pragma once
// The executed schedule as compact JSON for the interactive report (docs/report.md, "Data"):
// every op's kind, stage, microbatch, start, end and what it waited for, the critical path, and
// each device's memory curve with its cap. Columns rather than objects, so 100k ops stay small.
#include "sim/critical_path.h"
#include "sim/metrics.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <string>

namespace ppsim {

/// The timeline of `simulation` (run with SimulateOptions{true} for memory curves; without
/// timelines the curves are empty). Times are in the scenario's time unit, as in report_json;
/// memory is in bytes in the byte model with byte sizes, else in the count (or zb) unit.
std::string timeline_json(const Scenario &scenario, const Schedule &schedule,
                          const Simulation &simulation, const BubbleExplanation &explanation);

} // namespace ppsim
