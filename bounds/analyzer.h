#pragma once
// The bounds analyzer's single entry (docs/bounds.md, "The bounds", docs/model.md, "Command line
// and JSON"): every lower bound that applies to a scenario, the best of them, and the schedule's
// closed form. I/O-free; the CLI (`ppsim bounds`, `simulate`, `compare`) formats the report.
//
//   const ppsim::BoundsReport report =
//       ppsim::compute_bounds(scenario, ppsim::bounds_options_for(find_schedule("1f1b")));
//   double gap = ppsim::makespan_gap(simulation.metrics.makespan, report);
#include "base/time.h"
#include "bounds/lower_bounds.h"
#include "sim/scenario.h"
#include "sim/schedules/registry.h"

#include <optional>
#include <string>
#include <vector>

namespace ppsim {

struct BoundsOptions {
  /// Backward form of the schedules compared with the bound (a split schedule can beat the
  /// full-backward bounds; see BackwardForm).
  BackwardForm backward = BackwardForm::full;
  std::string schedule; ///< registry name for the closed form; empty = no closed form
  int group_size = 0;   ///< Megatron g of that schedule (0 = p)
};

/// Options matching a registered schedule: its backward form and name.
BoundsOptions bounds_options_for(const ScheduleInfo &schedule, int group_size = 0);

struct NamedBound {
  std::string name; ///< JSON key: "LB0", "LB1", "LB2", "LB3", "LB3_mem", "span_LB"
  Ticks value;
  bool bounds_makespan; ///< false for span_LB, which bounds the largest per-device span
};

struct BoundsReport {
  BackwardForm backward = BackwardForm::full; ///< the form of the schedules the bounds are for
  std::vector<NamedBound> lower_bounds;       ///< in the order above; LB3* only for split schedules
  Ticks best_lower_bound;                     ///< max of the makespan bounds
  std::optional<Ticks> closed_form;           ///< makespan of the schedule by its closed form
  bool lb2_integer_scan = true;               ///< LB2 exact integer scan (else LP relaxation)
  /// False when the cap is below what any plan holds of some stage at once (one activation, or
  /// its checkpoint levels' least walk): no schedule fits, and the memory-time bounds are left out.
  bool cap_fits_one_activation = true;

  /// The bound named `name`, if reported.
  [[nodiscard]] std::optional<Ticks> find(const std::string &name) const;
};

/// Every bound of docs/bounds.md, "The bounds" for `scenario` (cap = scenario.activations.cap,
/// left out under the byte model, whose engine does not check it), the best makespan bound and
/// the closed form. Linear in the number of stages.
BoundsReport compute_bounds(const Scenario &scenario, const BoundsOptions &options);

/// `makespan / best_lower_bound - 1` (0 when the bound is 0).
double makespan_gap(Ticks makespan, const BoundsReport &report);

/// `makespan / lower_bound - 1`, 0 when the bound is 0.
double gap_to_bound(Ticks makespan, Ticks lower_bound);

} // namespace ppsim
