#include "sim/schedule.h"

#include <fmt/format.h>

#include <algorithm>

namespace ppsim {

std::string_view op_kind_token(OpKind kind) {
  switch (kind) {
  case OpKind::forward:
    return "F";
  case OpKind::backward_input:
    return "B";
  case OpKind::backward_weight:
    return "W";
  case OpKind::backward_full:
    return "BW";
  case OpKind::recompute_forward:
    return "R";
  case OpKind::recompute_weight_inputs:
    return "RW";
  case OpKind::recompute_full_backward:
    return "RBW";
  case OpKind::overlapped:
    return "OV";
  }
  return "?";
}

std::string describe(const OpRef &op) {
  if (op.level > 0)
    return fmt::format("{}{}({},{})", op_kind_token(op.kind), op.level, op.stage, op.microbatch);
  return fmt::format("{}({},{})", op_kind_token(op.kind), op.stage, op.microbatch);
}

std::string describe(const Op &op) {
  if (op.kind() == OpKind::overlapped) {
    return fmt::format("OV({};{})", describe(op.sub_op(0)), describe(op.sub_op(1)));
  }
  return describe(op.first);
}

std::size_t Schedule::op_count() const {
  std::size_t count = 0;
  for (const auto &ops : device_ops)
    count += ops.size();
  return count;
}

std::size_t Schedule::recompute_op_count() const {
  std::size_t count = 0;
  for (const auto &ops : device_ops)
    count += static_cast<std::size_t>(std::ranges::count_if(
        ops, [](const Op &op) { return is_recompute(op.kind()); }));
  return count;
}

} // namespace ppsim
