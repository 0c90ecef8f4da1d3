#include "sim/op_locator.h"
#include "base/index.h"

#include "base/assert.h"

namespace ppsim {

OpLocator::OpLocator(const Schedule &schedule, int stage_count, int microbatches)
    : stage_count_(stage_count), microbatches_(microbatches) {
  const std::size_t table_size = at(stage_count) * at(microbatches);
  device_offset_.reserve(schedule.device_ops.size() + 1);
  entry_device_.reserve(schedule.op_count());
  std::int32_t entry = 0;
  for (std::size_t device = 0; device < schedule.device_ops.size(); ++device) {
    device_offset_.push_back(entry);
    for (const Op &op : schedule.device_ops[device]) {
      for (int part = 0; part < op.sub_op_count(); ++part) {
        const OpRef ref = op.sub_op(part);
        PPSIM_ASSERT(ref.stage >= 0 && ref.stage < stage_count);
        PPSIM_ASSERT(ref.microbatch >= 0 && ref.microbatch < microbatches);
        auto &table = entry_of_[at(ref.kind)];
        if (table.empty())
          table.assign(table_size, kAbsent);
        std::int32_t &slot = table[at(ref.stage) * microbatches + ref.microbatch];
        if (slot == kAbsent) {
          slot = entry;
        } else if (duplicates_.empty()) {
          duplicates_.push_back(ref);
        }
      }
      entry_device_.push_back(static_cast<std::int32_t>(device));
      ++entry;
    }
  }
  device_offset_.push_back(entry);
}

} // namespace ppsim
