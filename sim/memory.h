#pragma once
// Memory along time (docs/model.md, "Memory models"): allocation at the start of the
// allocating op, release at the end of the releasing op, transient peaks during an op.
#include "base/error.h"
#include "sim/engine.h"
#include "sim/op_locator.h"
#include "sim/scenario.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ppsim {

/// What one entry does to a device's resident memory.
struct MemoryEffect {
  double alloc = 0;     ///< added at the op's start
  double release = 0;   ///< removed at the op's end
  double transient = 0; ///< extra held only while the op runs
};

/// Resident amount from `time` on (a step function).
struct MemoryPoint {
  Ticks time;
  double resident = 0;
};

/// The first op on a device whose resident + alloc + transient exceeds the cap.
struct Violation {
  int device = 0;
  std::int32_t entry = 0;
  Ticks time;
  double resident = 0; ///< resident_before + alloc + transient at that op
  double cap = 0;
};

struct DeviceMemory {
  double peak = 0; ///< max over the device's ops of resident_before + alloc + transient
  std::vector<MemoryPoint> timeline; ///< filled only when asked for (plots, traces)
};

struct MemoryReport {
  std::vector<DeviceMemory> devices;
  std::vector<Violation> violations; ///< at most one per device, when the track has a cap
};

/// The most that fits under `cap`: the cap plus the relative slack of sums of doubles (fractions
/// such as 1/3 per chunk).
double cap_with_tolerance(double cap);
/// amount > cap_with_tolerance(cap): the one test of "fits under the cap".
bool over_cap(double amount, double cap);

/// The cap is below the least peak the schedule reaches: no remat plan of it fits, or a
/// generator's search finds nothing under it. An Error like any other for the user; what ranks
/// schedules or looks for candidates tells it apart from a failure.
class CapUnreachable : public Error {
public:
  using Error::Error;
};

/// The track whose cap is checked (docs/model.md, "Words"): bytes in the byte model, the count
/// (or zb) track otherwise.
const MemoryTrack &checked_track(const Scenario &scenario);
/// An amount in the checked track's unit: "1 GiB" in the byte model, "2.5" in count or zb units.
std::string format_checked_amount(const Scenario &scenario, double amount);
/// A cap as messages name it: "budget 1 GiB" in the byte model (there the cap is the device's
/// memory budget), "cap 2.5" in count or zb units.
std::string describe_cap(const Scenario &scenario, double cap);

/// "count", "zb" or "byte": the memory model's name in messages ("the count model").
const char *memory_model_name(MemoryModel model);

/// The effect of every entry on `track` (recomputation decisions are read from the schedule:
/// an F whose (s,j) has an R does not store; a B followed by RW/RBW drops what they rebuild).
std::vector<MemoryEffect> memory_effects(const Schedule &schedule, const OpLocator &locator,
                                         const MemoryTrack &track);

/// Per-device peak of `track` for a validated schedule. Peaks depend on the device orders only
/// (docs/model.md, "Memory": prefix sums of resident + alloc + transient), so no timing run is
/// needed; the same walk as track_memory.
std::vector<double> device_peaks(const Scenario &scenario, const Schedule &schedule,
                                 const MemoryTrack &track);

/// The peak of `device` when its ops run in the order `entries` (indices into `effects`): the
/// walk of device_peaks for an order that is not a schedule yet, such as a search's candidate.
double order_peak(std::span<const std::int32_t> entries, const std::vector<MemoryEffect> &effects,
                  const MemoryTrack &track, int device);

/// Walks each device's order (peaks are exact prefix sums, docs/model.md, "Memory models") and,
/// with
/// `with_timeline`, records the step function over time from the engine's result.
MemoryReport track_memory(const Schedule &schedule, const OpLocator &locator, const Timing &result,
                          const MemoryTrack &track, bool with_timeline);

} // namespace ppsim
