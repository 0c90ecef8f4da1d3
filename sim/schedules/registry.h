#pragma once
// name -> generator and every fact about the schedule (the one singleton the architecture
// allows). Adding a schedule: write its generator (and closed form, in-flight count) in a family
// file of this folder, declare them in families.h, add one row to the table in registry.cpp.
#include "sim/placement.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include "base/error.h"
#include "base/time.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim {

/// Generator parameters that are not part of the instance itself.
struct GeneratorOptions {
  int group_size = 0; ///< interleaved g; 0 = PyTorch's m / max(1, m div p)
};

using GeneratorFunction = Schedule (*)(const Scenario &, const GeneratorOptions &);
/// The error the generator throws for parameters outside its definition (p, m, v, g), or nullopt
/// when it accepts them; written beside the generator, which throws this same error. A search
/// that finds nothing under the cap is an outcome, not a precondition: it throws CapUnreachable.
using Precondition = std::optional<Error> (*)(const Scenario &, const GeneratorOptions &);

/// Per-stage costs of a scenario whose stages and boundaries are all alike: what a closed form
/// is written in (docs/bounds.md, "Closed forms"). c is the transfer time of one boundary.
struct UniformCosts {
  Ticks f, b, w, r, c;
  std::int64_t p, m, v;
  int group_size; ///< Megatron's g (0 = p)
  RematTiming remat_timing;

  [[nodiscard]] Ticks full() const { return f + b + w; }
  [[nodiscard]] bool all_equal() const { return f == b && b == w; }
};

/// The makespan by formula, or nullopt outside the formula's validity range.
using ClosedForm = std::optional<Ticks> (*)(const UniformCosts &);
/// Microbatches stage `stage` of `stages` holds at its peak (what the partition DP budgets).
using InFlightCount = int (*)(int stages, int stage);

struct ScheduleInfo {
  std::string name;
  std::string description; ///< one line, for `ppsim schedules`
  PlacementKind placement;
  int default_chunks;  ///< v when the user gives none (1 single wave, 2 V shape)
  bool split_backward; ///< emits B and W rather than BW
  GeneratorFunction generate;
  Precondition precondition = nullptr; ///< none: any p, m and v of its placement
  ClosedForm closed_form = nullptr;  ///< none: no published formula
  InFlightCount in_flight = nullptr; ///< none: measured on a run (docs/partition.md)

  /// The error `generate` would throw for these parameters, or nullopt when it accepts them.
  [[nodiscard]] std::optional<Error> refusal(const Scenario &scenario,
                                             const GeneratorOptions &options) const {
    return precondition ? precondition(scenario, options) : std::nullopt;
  }
  /// v for a requested v (0 = the schedule's default).
  [[nodiscard]] int chunks(int requested) const {
    return requested > 0 ? requested : default_chunks;
  }
  /// Pipes the placement runs: 2 for DualPipe, else 1.
  [[nodiscard]] int pipes() const { return placement == PlacementKind::dual_pipe ? 2 : 1; }
  /// Stages of one pipe on `devices` devices with `requested` chunks each.
  [[nodiscard]] int stages_per_pipe(int devices, int requested) const {
    return devices * chunks(requested);
  }
  /// One stage per device and one pipe (what a per-device partition splits for).
  [[nodiscard]] bool one_stage_per_device(int requested) const {
    return chunks(requested) == 1 && pipes() == 1;
  }
};

/// Every registered schedule, in listing order.
const std::vector<ScheduleInfo> &schedule_registry();

/// The entry named `name`; throws Error "unknown schedule 'x', did you mean 'y'?" otherwise.
const ScheduleInfo &find_schedule(const std::string &name);

/// The entry named `name`, or nullptr (for callers that test a name rather than report it).
const ScheduleInfo *lookup_schedule(std::string_view name);

/// Runs the generator and names the result.
Schedule generate_schedule(const ScheduleInfo &info, const Scenario &scenario,
                           const GeneratorOptions &options);

} // namespace ppsim
