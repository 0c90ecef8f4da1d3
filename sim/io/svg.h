#pragma once
// Gantt chart of a simulation as a self-contained SVG 1.1 document (`--svg`).
#include "sim/metrics.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <string>

namespace ppsim {

struct GanttOptions {
  int plot_width_px = 1200;     ///< width of the time axis; the document adds margins
  int row_height_px = 20;       ///< height of one device's op boxes
  bool memory_curves = true;    ///< draw each device's activation curve under its row
  std::string time_unit = "ms"; ///< printed on the time axis and in the title
};

/// One row per device with a box per op coloured by kind (paler for odd chunks of multi-chunk
/// placements; microbatch labels where the box is wide enough; the op and its times as a
/// tooltip), a time axis, a legend, the schedule name and makespan in the title, and under
/// each row the device's activation memory as a step curve scaled to the largest peak (or cap
/// K, drawn dashed). Curves need a simulation run with SimulateOptions{true}.
std::string gantt_svg(const Scenario &scenario, const Schedule &schedule,
                      const Simulation &simulation, const GanttOptions &options = {});

} // namespace ppsim
