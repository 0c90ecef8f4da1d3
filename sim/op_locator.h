#pragma once
// Dense lookup from (kind, stage, microbatch) to the schedule entry that executes it.
#include "base/index.h"
#include "sim/schedule.h"

#include <array>
#include <cstdint>
#include <vector>

namespace ppsim {

/// Entries are numbered device by device: entry = entry_offset(g) + position in g's list.
class OpLocator {
public:
  /// Indexes every sub-op of `schedule`; ids must already be in range (see validate.h).
  /// Duplicates keep the first entry; `duplicate()` reports the first one found.
  OpLocator(const Schedule &schedule, int stage_count, int microbatches);

  static constexpr std::int32_t kAbsent = -1;

  /// The entry executing `op`, or kAbsent. Inline: validation and the timing graph look up
  /// every op's neighbours.
  [[nodiscard]] std::int32_t find(OpRef op) const {
    const auto &table = entry_of_[at(op.kind)];
    if (table.empty() || op.stage < 0 || op.stage >= stage_count_ || op.microbatch < 0 ||
        op.microbatch >= microbatches_) {
      return kAbsent;
    }
    return table[at(op.stage) * at(microbatches_) + at(op.microbatch)];
  }
  [[nodiscard]] bool contains(OpKind kind, int stage, int microbatch) const {
    return find(OpRef{kind, stage, microbatch}) != kAbsent;
  }
  [[nodiscard]] std::int32_t entry_offset(int device) const { return device_offset_[at(device)]; }
  [[nodiscard]] std::int32_t entry_count() const { return device_offset_.back(); }
  /// Device that runs entry `entry`.
  [[nodiscard]] int device_of(std::int32_t entry) const { return entry_device_[at(entry)]; }
  /// The first sub-op that appeared twice, if any.
  [[nodiscard]] const std::vector<OpRef> &duplicates() const { return duplicates_; }

private:
  int stage_count_;
  int microbatches_;
  // One table of size stage_count * microbatches per kind that occurs (empty otherwise), so a
  // schedule without recomputation pays only for F and B/W tables.
  std::array<std::vector<std::int32_t>, kOpKindCount> entry_of_;
  std::vector<std::int32_t> device_offset_;
  std::vector<std::int32_t> entry_device_;
  std::vector<OpRef> duplicates_;
};

} // namespace ppsim
