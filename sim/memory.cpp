#include "sim/memory.h"
#include "base/decimal.h"
#include "base/index.h"

#include <algorithm>
#include <fmt/format.h>

namespace ppsim {
namespace {

// Relative slack when comparing sums of doubles with the cap (fractions such as 1/3 per chunk).
constexpr double kCapTolerance = 1e-9;

// Increments and transients of docs/remat.md, "The ILP (ppsim form)" (ELF's accounting without
// counting the kept checkpoint twice), with ck = stage.checkpoint; the count model has ck = 0 and
// no transients.
} // namespace

double cap_with_tolerance(double cap) { return cap * (1 + kCapTolerance) + kCapTolerance; }

bool over_cap(double amount, double cap) { return amount > cap_with_tolerance(cap); }

namespace {
bool checks_bytes(const Scenario &scenario) {
  return scenario.memory_model == MemoryModel::bytes && scenario.bytes;
}
} // namespace

const MemoryTrack &checked_track(const Scenario &scenario) {
  return checks_bytes(scenario) ? *scenario.bytes : scenario.activations;
}

std::string format_checked_amount(const Scenario &scenario, double amount) {
  return checks_bytes(scenario) ? format_bytes(amount) : format_readable(amount);
}

const char *memory_model_name(MemoryModel model) {
  switch (model) {
  case MemoryModel::count:
    return "count";
  case MemoryModel::zb:
    return "zb";
  case MemoryModel::bytes:
    break;
  }
  return "byte";
}

std::string describe_cap(const Scenario &scenario, double cap) {
  if (!checks_bytes(scenario) && scenario.cap_from_budget) {
    return fmt::format("cap {}: K of the {} budget in the {} model", format_readable(cap),
                       format_bytes(*scenario.cap_from_budget),
                       memory_model_name(scenario.memory_model));
  }
  return (checks_bytes(scenario) ? "budget " : "cap ") + format_checked_amount(scenario, cap);
}

namespace {

// The level of (s,j)'s R (0: the whole stage from its checkpoint), or nothing without an R.
std::optional<int> forward_level(const Schedule &schedule, const OpLocator &locator,
                                 const OpRef &op) {
  const std::int32_t entry =
      locator.find(OpRef{OpKind::recompute_forward, op.stage, op.microbatch});
  if (entry == OpLocator::kAbsent)
    return std::nullopt;
  const int device = locator.device_of(entry);
  return schedule.device_ops[at(device)][at(entry - locator.entry_offset(device))].first.level;
}

MemoryEffect sub_op_effect(const OpRef &op, const Schedule &schedule, const OpLocator &locator,
                           const StageMemory &stage) {
  const auto has = [&](OpKind kind) { return locator.contains(kind, op.stage, op.microbatch); };
  const double rebuilt_by_rbw = stage.kept_after_b - stage.checkpoint;
  // What B drops because RW or RBW will rebuild it before W (docs/remat.md, "The three options").
  const auto dropped_after_b = [&]() {
    if (has(OpKind::recompute_full_backward))
      return rebuilt_by_rbw;
    if (has(OpKind::recompute_weight_inputs))
      return stage.weight_input_share;
    return 0.0;
  };
  // A checkpoint level keeps `kept` from F on; its R and the backward after it peak at the
  // level's backward peak (the rotor's walk: each layer recomputed, then its backward, layer by
  // layer). A split B leaves what W needs (the linears' inputs and output gradients, M_b) for
  // every layer at once, so B allocates it above `kept` from its start; a fused BW frees each
  // layer's part as it goes and never holds the whole M_b (docs/remat.md, "Checkpoint levels").
  // Only F, R and the backward that follows depend on the R's level.
  const bool level_matters = op.kind == OpKind::forward || op.kind == OpKind::recompute_forward ||
                             op.kind == OpKind::backward_input || op.kind == OpKind::backward_full;
  const std::optional<int> level =
      level_matters ? forward_level(schedule, locator, op) : std::nullopt;
  const CheckpointLevelMemory *checkpointed =
      level && *level > 0 ? &stage.checkpoint_levels[at(*level - 1)] : nullptr;
  // The selective level rebuilds the whole record before the backward, as the selective policy.
  const CheckpointLevelMemory *selective =
      checkpointed && checkpointed->selective ? checkpointed : nullptr;
  if (selective)
    checkpointed = nullptr;
  // What a split B adds to the level's part for W, and the level's walk above its part.
  const double reserved =
      checkpointed ? std::max(0.0, stage.kept_after_b - checkpointed->kept) : 0.0;
  const double level_walk =
      checkpointed ? std::max(0.0, checkpointed->backward_peak - checkpointed->kept) : 0.0;
  // What the stage holds right before its backward: the full record, or the level's part.
  const double before_backward = checkpointed ? checkpointed->kept : stage.stored;
  switch (op.kind) {
  case OpKind::forward:
    if (selective)
      return {selective->kept, 0, stage.peak_forward};
    if (checkpointed)
      return {checkpointed->kept, 0, stage.peak_checkpointed_forward};
    if (level)
      return {stage.checkpoint, 0, stage.peak_checkpointed_forward};
    return {stage.stored, 0, stage.peak_forward};
  case OpKind::recompute_forward:
    if (selective)
      return {stage.stored - selective->kept, 0, stage.peak_forward};
    if (checkpointed)
      return {0, 0, level_walk};
    return {stage.stored - stage.checkpoint, 0, stage.peak_forward};
  case OpKind::backward_input:
    if (checkpointed) {
      return {reserved, std::max(0.0, before_backward - stage.kept_after_b) + dropped_after_b(),
              std::max(stage.peak_backward_input, level_walk - reserved)};
    }
    return {0, before_backward - stage.kept_after_b + dropped_after_b(), stage.peak_backward_input};
  case OpKind::backward_weight:
    return {0, stage.kept_after_b - stage.kept_after_w, stage.peak_backward_weight};
  case OpKind::backward_full:
    if (checkpointed) { // what W leaves (M_w) may exceed what the level kept
      return {std::max(0.0, stage.kept_after_w - before_backward),
              std::max(0.0, before_backward - stage.kept_after_w), level_walk};
    }
    // W's transient comes after B has already released M_f - M_b.
    return {0, before_backward - stage.kept_after_w,
            std::max(stage.peak_backward_input,
                     stage.kept_after_b - before_backward + stage.peak_backward_weight)};
  case OpKind::recompute_weight_inputs:
    return {stage.weight_input_share, 0, stage.peak_checkpointed_forward};
  case OpKind::recompute_full_backward:
    return {
        rebuilt_by_rbw, 0,
        std::max(stage.peak_forward, stage.stored - stage.checkpoint + stage.peak_backward_input)};
  case OpKind::overlapped:
    break;
  }
  return {};
}

// Appends the effect of each of device g's entries on `track` to `effects`, in its list's order.
void append_device_effects(const Schedule &schedule, const OpLocator &locator,
                           const MemoryTrack &track, int g, std::vector<MemoryEffect> &effects) {
  for (const Op &op : schedule.device_ops[at(g)]) {
    MemoryEffect total;
    for (int part = 0; part < op.sub_op_count(); ++part) {
      const OpRef ref = op.sub_op(part);
      const MemoryEffect one = sub_op_effect(ref, schedule, locator, track.stages[at(ref.stage)]);
      total.alloc += one.alloc;
      total.release += one.release;
      total.transient = std::max(total.transient, one.transient);
    }
    effects.push_back(total);
  }
}

} // namespace

std::vector<MemoryEffect> memory_effects(const Schedule &schedule, const OpLocator &locator,
                                         const MemoryTrack &track) {
  std::vector<MemoryEffect> effects;
  effects.reserve(schedule.op_count());
  for (int g = 0; g < schedule.device_count(); ++g)
    append_device_effects(schedule, locator, track, g, effects);
  return effects;
}

namespace {

// The one walk of a device's order: `visit(entry, during, resident_after, release)` for the
// entries `entry_at(0)`, ..., `entry_at(count - 1)` in turn, where `during` is resident_before +
// alloc + transient; returns the peak, at least the starting `resident`.
template <class EntryAt, class Visit>
double walk_order(std::size_t count, const EntryAt &entry_at,
                  const std::vector<MemoryEffect> &effects, double resident, Visit &&visit) {
  double peak = resident;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t entry = entry_at(i);
    const MemoryEffect &effect = effects[entry];
    const double during = resident + effect.alloc + effect.transient;
    peak = std::max(peak, during);
    resident += effect.alloc - effect.release;
    visit(entry, during, resident, effect.release);
  }
  return peak;
}

double starting_resident(const MemoryTrack &track, int g) {
  return track.device_constant.empty() ? 0.0 : track.device_constant[at(g)];
}

// walk_order over device g's entries of `schedule`, `visit` given their entry numbers. The
// effects are computed one device at a time into `effects` (a buffer kept across devices), so a
// walk of every device never holds the whole schedule's.
template <class Visit>
double walk_device(const Schedule &schedule, const OpLocator &locator, const MemoryTrack &track,
                   int g, std::vector<MemoryEffect> &effects, Visit &&visit) {
  effects.clear();
  append_device_effects(schedule, locator, track, g, effects);
  const std::size_t first = at(locator.entry_offset(g));
  return walk_order(
      effects.size(), [](std::size_t i) { return i; }, effects, starting_resident(track, g),
      [&](std::size_t i, double during, double resident, double release) {
        visit(first + i, during, resident, release);
      });
}

} // namespace

std::vector<double> device_peaks(const Scenario &scenario, const Schedule &schedule,
                                 const MemoryTrack &track) {
  const OpLocator locator(schedule, scenario.stage_count(), scenario.microbatches);
  std::vector<MemoryEffect> effects;
  std::vector<double> peaks;
  for (int g = 0; g < schedule.device_count(); ++g) {
    peaks.push_back(walk_device(schedule, locator, track, g, effects,
                                [](std::size_t, double, double, double) {}));
  }
  return peaks;
}

double order_peak(std::span<const std::int32_t> entries, const std::vector<MemoryEffect> &effects,
                  const MemoryTrack &track, int device) {
  return walk_order(
      entries.size(), [&](std::size_t i) { return at(entries[i]); }, effects,
      starting_resident(track, device), [](std::size_t, double, double, double) {});
}

MemoryReport track_memory(const Schedule &schedule, const OpLocator &locator, const Timing &result,
                          const MemoryTrack &track, bool with_timeline) {
  std::vector<MemoryEffect> effects;
  MemoryReport report;
  report.devices.resize(schedule.device_ops.size());
  for (int g = 0; g < schedule.device_count(); ++g) {
    DeviceMemory &memory = report.devices[at(g)];
    if (with_timeline) {
      memory.timeline.reserve(2 * schedule.device_ops[at(g)].size() + 1);
      memory.timeline.push_back({Ticks{}, starting_resident(track, g)});
    }
    bool violated = false;
    memory.peak =
        walk_device(schedule, locator, track, g, effects,
                    [&](std::size_t entry, double during, double resident, double release) {
                      if (track.cap && !violated && over_cap(during, *track.cap)) {
                        violated = true;
                        report.violations.push_back({g, static_cast<std::int32_t>(entry),
                                                     result.start[entry], during, *track.cap});
                      }
                      if (with_timeline) {
                        memory.timeline.push_back({result.start[entry], resident + release});
                        memory.timeline.push_back({result.end[entry], resident});
                      }
                    });
  }
  return report;
}

} // namespace ppsim
