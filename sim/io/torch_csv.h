#pragma once
// PyTorch pipelining CSV schedules (docs/scenario.md, "PyTorch CSV schedules"; pytorch/pytorch
// torch/distributed/pipelining/schedules.py `_dump_csv`, `_load_csv`, `_Action.from_str`).
// One row per device, one action per cell: "2F0", "1I3" (input grad = ppsim B), "3B1" (full
// backward = BW), "0W5", "(0F7;7B3)OVERLAP_F_B".
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ppsim {

/// A schedule read from CSV, with what the rows imply about the instance.
struct ImportedSchedule {
  Schedule schedule;
  std::vector<int> placement; ///< pi(s), inferred from which row mentions each stage
  int chunks = 1;             ///< stages per device (v), when every device holds the same number
  int microbatches = 0;       ///< 1 + the largest microbatch id
  /// Where that largest id was read: the line and the cell, for errors about an inferred m.
  std::pair<int, std::string> largest_microbatch_at;
  std::vector<std::string> dropped; ///< non-compute action kinds that were ignored (SEND_F, ...)
  /// The file uses PyTorch's older action names (B = input gradient, BW = full backward).
  bool older_vocabulary = false;
};

/// Parses CSV text; errors name `source`, the line (= device row) and the offending cell. The
/// schedule is named "file:<source>". Both of PyTorch's vocabularies are read: the current one
/// (I input gradient, B full backward) and the older one (B input gradient, BW full backward),
/// told apart by a BW, or by a B and a W of one (stage, microbatch) with no I.
ImportedSchedule parse_torch_csv(std::string_view text, const std::string &source);

/// Reads a CSV file (thin wrapper over parse_torch_csv).
ImportedSchedule read_torch_csv(const std::string &path);

/// A schedule written as PyTorch CSV, with warnings where PyTorch's own classes would reject it.
struct TorchCsvExport {
  std::string text;
  std::vector<std::string> warnings;
};

/// Writes compute actions only, one row per device, no idle cells, or with `spacing` the idle
/// cells of PyTorch's unit-step lock-step replay (a device idles a step when what its next
/// action needs ran in no earlier step). Throws Error for what the format cannot express: ops
/// with no PyTorch action (R, RW, RBW) and two-pipe schedules.
TorchCsvExport write_torch_csv(const Scenario &scenario, const Schedule &schedule,
                               bool spacing = false);

} // namespace ppsim
