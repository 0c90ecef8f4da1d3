#include "sim/io/torch_csv.h"
#include "base/index.h"

#include "base/error.h"
#include "base/text_file.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace ppsim {
namespace {

// Action kinds PyTorch uses for communication and sharding; ppsim derives transfers itself.
constexpr std::string_view kIgnoredKinds[] = {"UNSHARD", "RESHARD", "REDUCE_GRAD", "SEND_F",
                                              "RECV_F",  "SEND_B",  "RECV_B"};

struct CellParser {
  const std::string &source;
  int line;
  std::set<std::string> &dropped;

  [[noreturn]] void fail(std::string_view cell, const std::string &why) const {
    throw Error(source, line, "", fmt::format("action '{}': {}", cut_for_message(cell), why));
  }

  // "<stage><kind><microbatch>"; returns false for ignored kinds. `plain_b` says the kind was
  // "B", whose meaning depends on the file's vocabulary (decided once the file is read).
  bool parse_simple(std::string_view cell, std::string_view whole, OpRef &op, bool &plain_b) const {
    plain_b = false;
    std::size_t digits = 0;
    while (digits < cell.size() && cell[digits] >= '0' && cell[digits] <= '9')
      ++digits;
    if (digits == 0)
      fail(whole, "expected <stage><action><microbatch>, such as 2F0");
    int stage = 0;
    if (std::from_chars(cell.data(), cell.data() + digits, stage).ec != std::errc())
      fail(whole, "the stage number is out of range");
    std::size_t kind_end = digits;
    while (kind_end < cell.size() && !(cell[kind_end] >= '0' && cell[kind_end] <= '9'))
      ++kind_end;
    const std::string_view kind = cell.substr(digits, kind_end - digits);
    const std::string_view number = cell.substr(kind_end);
    for (const std::string_view ignored : kIgnoredKinds) {
      if (kind == ignored) {
        dropped.insert(std::string(kind));
        return false;
      }
    }
    int microbatch = 0;
    const auto [end, error] =
        std::from_chars(number.data(), number.data() + number.size(), microbatch);
    if (number.empty() || error != std::errc() || end != number.data() + number.size()) {
      fail(whole, "expected a microbatch number after the action");
    }
    if (microbatch == std::numeric_limits<int>::max()) // the count m would not fit an int
      fail(whole, "the microbatch number is out of range");
    if (kind == "F") {
      op = {OpKind::forward, stage, microbatch};
    } else if (kind == "I") {
      op = {OpKind::backward_input, stage, microbatch};
    } else if (kind == "B") {
      op = {OpKind::backward_full, stage, microbatch};
      plain_b = true;
    } else if (kind == "BW") { // the older vocabulary's full backward
      op = {OpKind::backward_full, stage, microbatch};
    } else if (kind == "W") {
      op = {OpKind::backward_weight, stage, microbatch};
    } else {
      fail(whole,
           fmt::format("unknown action '{}' (expected F, I, B, W, BW or a communication action)",
                       cut_for_message(kind)));
    }
    return true;
  }

  // Returns false when the cell holds nothing to compute; plain_b[k]: sub-op k was written "B".
  bool parse(std::string_view cell, Op &op, std::array<bool, 2> &plain_b) const {
    plain_b = {false, false};
    constexpr std::string_view overlap_suffix = ")OVERLAP_F_B";
    if (cell.empty() || cell == "None")
      return false;
    if (cell.front() == '(') {
      if (cell.size() <= overlap_suffix.size() + 1 ||
          cell.substr(cell.size() - overlap_suffix.size()) != overlap_suffix) {
        fail(cell, "expected (<forward>;<backward>)OVERLAP_F_B");
      }
      const std::string_view inner = cell.substr(1, cell.size() - 1 - overlap_suffix.size());
      const auto separator = inner.find(';');
      if (separator == std::string_view::npos)
        fail(cell, "expected (<forward>;<backward>)OVERLAP_F_B");
      OpRef forward;
      OpRef backward;
      if (!parse_simple(inner.substr(0, separator), cell, forward, plain_b[0]) ||
          !parse_simple(inner.substr(separator + 1), cell, backward, plain_b[1]) ||
          forward.kind != OpKind::forward ||
          (backward.kind != OpKind::backward_full && backward.kind != OpKind::backward_input)) {
        fail(cell, "an overlapped action pairs a forward with a backward");
      }
      op = Op::overlap(forward, backward);
      return true;
    }
    OpRef single;
    if (!parse_simple(cell, cell, single, plain_b[0]))
      return false;
    op = Op{single, {}};
    return true;
  }
};

std::string torch_action(const OpRef &op) {
  switch (op.kind) {
  case OpKind::forward:
    return fmt::format("{}F{}", op.stage, op.microbatch);
  case OpKind::backward_input:
    return fmt::format("{}I{}", op.stage, op.microbatch);
  case OpKind::backward_full:
    return fmt::format("{}B{}", op.stage, op.microbatch);
  case OpKind::backward_weight:
    return fmt::format("{}W{}", op.stage, op.microbatch);
  default:
    break;
  }
  throw Error(fmt::format("op {} has no PyTorch action (the torch CSV format has no recomputation)",
                          describe(op)));
}

// PyTorch's unit-step lock-step replay (`_add_bubbles_to_actions`): at each step every device
// runs its next action if what it needs ran in an earlier step (a forward the previous stage's
// forward, a backward the next stage's backward, or the last stage's own forward), and idles
// (an empty cell) otherwise.
std::vector<std::vector<std::string>>
with_idle_cells(const Schedule &schedule, const std::vector<std::vector<std::string>> &rows,
                int stages) {
  enum Phase { kForward = 0, kBackward = 1 };
  std::set<std::tuple<int, int, int>> seen; // (stage, phase, microbatch)
  const auto ready = [&](const OpRef &ref) {
    switch (ref.kind) {
    case OpKind::forward:
      return ref.stage == 0 || seen.contains({ref.stage - 1, kForward, ref.microbatch});
    case OpKind::backward_full:
    case OpKind::backward_input:
      return ref.stage == stages - 1 ? seen.contains({ref.stage, kForward, ref.microbatch})
                                     : seen.contains({ref.stage + 1, kBackward, ref.microbatch});
    default:
      return true;
    }
  };
  std::vector<std::vector<std::string>> spaced(rows.size());
  std::vector<std::size_t> next(rows.size(), 0);
  for (bool pending = true; pending;) {
    pending = false;
    bool advanced = false;
    std::vector<std::tuple<int, int, int>> done;
    for (std::size_t g = 0; g < rows.size(); ++g) {
      if (next[g] == rows[g].size())
        continue;
      pending = true;
      const Op &op = schedule.device_ops[g][next[g]];
      bool can_run = true;
      for (int part = 0; part < op.sub_op_count(); ++part)
        can_run = can_run && ready(op.sub_op(part));
      if (!can_run) {
        spaced[g].emplace_back();
        continue;
      }
      for (int part = 0; part < op.sub_op_count(); ++part) {
        const OpRef ref = op.sub_op(part);
        if (ref.kind == OpKind::forward)
          done.emplace_back(ref.stage, kForward, ref.microbatch);
        if (ref.kind == OpKind::backward_full || ref.kind == OpKind::backward_input)
          done.emplace_back(ref.stage, kBackward, ref.microbatch);
      }
      spaced[g].push_back(rows[g][next[g]++]);
      advanced = true;
    }
    if (pending && !advanced)
      throw Error(fmt::format(
          "schedule '{}' cannot be spaced in lock step: no device can run its next action",
          schedule.name));
    seen.insert(done.begin(), done.end());
  }
  // Idle cells after a device's last action carry nothing.
  for (auto &cells : spaced) {
    while (!cells.empty() && cells.back().empty())
      cells.pop_back();
  }
  return spaced;
}

} // namespace

ImportedSchedule parse_torch_csv(std::string_view text, const std::string &source) {
  ImportedSchedule imported;
  std::set<std::string> dropped;
  TextLines lines(text);
  int line = 0;
  // Stage -> device, sparse while reading: a stage number is only a claim until every stage
  // below it has appeared (`2147483647F0` alone once allocated 8 GB before being refused).
  std::map<int, int> stage_owner;
  // Where "B" was written (device, op index, sub-op), and what tells the vocabulary apart.
  std::vector<std::array<std::size_t, 3>> plain_b_at;
  bool saw_input_gradient = false, saw_bw = false;
  std::set<std::pair<int, int>> with_b, with_w;
  while (const std::optional<std::string_view> raw = lines.next()) {
    ++line;
    std::string_view row = *raw;
    auto &ops = imported.schedule.device_ops.emplace_back();
    const int device = static_cast<int>(imported.schedule.device_ops.size()) - 1;
    const CellParser parser{source, line, dropped};
    while (true) {
      const auto comma = row.find(',');
      const std::string_view cell = trim(row.substr(0, comma), " \"\r");
      Op op;
      std::array<bool, 2> plain_b{};
      if (parser.parse(cell, op, plain_b)) {
        for (int part = 0; part < op.sub_op_count(); ++part) {
          const OpRef ref = op.sub_op(part);
          if (plain_b[at(part)]) {
            plain_b_at.push_back({at(device), ops.size(), at(part)});
            with_b.insert({ref.stage, ref.microbatch});
          } else if (ref.kind == OpKind::backward_full) {
            saw_bw = true;
          }
          saw_input_gradient = saw_input_gradient || ref.kind == OpKind::backward_input;
          if (ref.kind == OpKind::backward_weight)
            with_w.insert({ref.stage, ref.microbatch});
          const auto [entry, first] = stage_owner.try_emplace(ref.stage, device);
          const int owner = entry->second;
          if (!first && owner != device) {
            throw Error(source, line, "",
                        fmt::format("stage {} appears on device {} and device {}", ref.stage, owner,
                                    device));
          }
          if (ref.microbatch >= imported.microbatches) {
            imported.microbatches = ref.microbatch + 1;
            imported.largest_microbatch_at = {line, std::string(cell)};
          }
        }
        ops.push_back(op);
      }
      if (comma == std::string_view::npos)
        break;
      row.remove_prefix(comma + 1);
    }
  }
  // A trailing empty row is a final newline, not a device.
  while (!imported.schedule.device_ops.empty() && imported.schedule.device_ops.back().empty()) {
    imported.schedule.device_ops.pop_back();
  }
  if (imported.schedule.device_ops.empty())
    throw Error(source, 0, "", "the schedule has no actions");
  // PyTorch's current names: I input gradient, B full backward. Older files wrote B for the
  // input gradient and BW for the full backward: a BW, or a B and a W of one (stage,
  // microbatch) with no I anywhere, means the older names.
  const bool b_with_w = std::any_of(with_b.begin(), with_b.end(),
                                    [&](const auto &key) { return with_w.contains(key); });
  if (!saw_input_gradient && (saw_bw || b_with_w)) {
    imported.older_vocabulary = true;
    for (const auto &[device, index, part] : plain_b_at) {
      Op &op = imported.schedule.device_ops[device][index];
      OpRef &ref = part == 0 ? op.first : op.second;
      ref.kind = OpKind::backward_input;
    }
  }
  imported.placement.clear();
  for (const auto &[stage, device] : stage_owner) {
    if (stage != static_cast<int>(imported.placement.size()))
      throw Error(source, 0, "", fmt::format("stage {} never appears", imported.placement.size()));
    imported.placement.push_back(device);
  }
  const int devices = imported.schedule.device_count();
  imported.chunks = std::max(1, static_cast<int>(imported.placement.size()) / devices);
  imported.dropped.assign(dropped.begin(), dropped.end());
  imported.schedule.name = "file:" + source;
  return imported;
}

ImportedSchedule read_torch_csv(const std::string &path) {
  return parse_torch_csv(read_text_file(path, "schedule file"), path);
}

TorchCsvExport write_torch_csv(const Scenario &scenario, const Schedule &schedule, bool spacing) {
  if (scenario.pipes != 1) {
    throw Error(
        fmt::format("schedule '{}' runs {} pipes, which the torch CSV format cannot express",
                    schedule.name, scenario.pipes));
  }
  const int microbatches = scenario.microbatches;
  TorchCsvExport exported;
  std::vector<std::vector<std::string>> rows;
  for (const auto &ops : schedule.device_ops) {
    std::vector<std::string> &cells = rows.emplace_back();
    cells.reserve(ops.size());
    for (const Op &op : ops) {
      if (op.kind() == OpKind::overlapped) {
        cells.push_back(fmt::format("({};{})OVERLAP_F_B", torch_action(op.sub_op(0)),
                                    torch_action(op.sub_op(1))));
      } else {
        cells.push_back(torch_action(op.first));
      }
    }
  }
  if (spacing)
    rows = with_idle_cells(schedule, rows, scenario.stage_count());
  for (const std::vector<std::string> &cells : rows)
    exported.text += fmt::format("{}\n", fmt::join(cells, ","));
  // Where PyTorch's own schedule classes would refuse the same parameters (docs/oracles.md O-19).
  const int p = schedule.device_count();
  if (schedule.name == "1f1b" && microbatches < p) {
    exported.warnings.push_back(
        fmt::format("PyTorch Schedule1F1B rejects m = {} < p = {}", microbatches, p));
  }
  if (schedule.name == "dualpipev" && microbatches < 2 * p) {
    exported.warnings.push_back(
        fmt::format("PyTorch ScheduleDualPipeV rejects m = {} < 2p = {}", microbatches, 2 * p));
  }
  if (schedule.name == "interleaved-1f1b") {
    const int rounds = std::max(1, microbatches / p);
    if (microbatches % rounds != 0) {
      exported.warnings.push_back(fmt::format(
          "PyTorch ScheduleInterleaved1F1B rejects m = {} (not a multiple of {} rounds)",
          microbatches, rounds));
    }
  }
  return exported;
}

} // namespace ppsim
