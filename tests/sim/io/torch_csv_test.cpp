// PyTorch pipelining CSV (spec schedules.md 14): vocabulary translation, idle cells, ignored
// actions, overlapped pairs, placement inference, errors, and export.
#include "sim/io/torch_csv.h"

#include "sim/error.h"
#include "sim/io/run_setup.h"

#include <doctest/doctest.h>

using namespace ppsim;

TEST_CASE("import translates F, I, B, W and drops idle cells") {
  // PyTorch I = input gradient (ppsim B), B = full backward (ppsim BW); older PyTorch keeps the
  // idle cells, newer ones drop them and append REDUCE_GRAD (oracle O-22): both are accepted.
  const ImportedSchedule imported =
      parse_torch_csv("0F0,,0F1,None,0I0,0W0,0B1,0REDUCE_GRAD\n,1F0,1B0,1F1,1B1\n", "s.csv");
  REQUIRE(imported.schedule.device_count() == 2);
  CHECK(imported.schedule.device_ops[0] ==
        std::vector<Op>{Op::make(OpKind::forward, 0, 0), Op::make(OpKind::forward, 0, 1),
                        Op::make(OpKind::backward_input, 0, 0), Op::make(OpKind::backward_weight, 0, 0),
                        Op::make(OpKind::backward_full, 0, 1)});
  CHECK(imported.schedule.device_ops[1].size() == 4);
  CHECK(imported.placement == std::vector<int>{0, 1});
  CHECK(imported.microbatches == 2);
  CHECK(imported.dropped == std::vector<std::string>{"REDUCE_GRAD"});
  CHECK(imported.schedule.name == "file:s.csv");
}

TEST_CASE("overlapped pairs and a V placement are inferred from the rows") {
  // Device 0 holds stages 0 and 3, device 1 stages 1 and 2 (V placement, p = 2).
  const ImportedSchedule imported = parse_torch_csv("0F0,3F0,(0F1;3B0)OVERLAP_F_B\n1F0,2F0\n", "v.csv");
  CHECK(imported.placement == std::vector<int>{0, 1, 1, 0});
  CHECK(imported.chunks == 2);
  CHECK(imported.schedule.device_ops[0][2] ==
        Op::overlap({OpKind::forward, 0, 1}, {OpKind::backward_full, 3, 0}));
}

TEST_CASE("malformed cells name file, line and cell") {
  const auto error_of = [](const std::string &text) {
    try {
      parse_torch_csv(text, "bad.csv");
    } catch (const Error &error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("0F0\n1Q0\n") ==
        "bad.csv:2: action '1Q0': unknown action 'Q' (expected F, I, B, W or a communication action)");
  CHECK(error_of("F0\n") == "bad.csv:1: action 'F0': expected <stage><action><microbatch>, such as 2F0");
  CHECK(error_of("0F\n") == "bad.csv:1: action '0F': expected a microbatch number after the action");
  CHECK(error_of("(0F0;1F0)OVERLAP_F_B\n") == "bad.csv:1: action '(0F0;1F0)OVERLAP_F_B': an overlapped action "
                                              "pairs a forward with a backward");
  CHECK(error_of("0F0\n0B0\n") == "bad.csv:2: stage 0 appears on device 0 and device 1");
  CHECK(error_of("0F0\n2F0\n") == "bad.csv: stage 1 never appears");
  CHECK(error_of("\n\n") == "bad.csv: the schedule has no actions");
}

TEST_CASE("export writes PyTorch actions and refuses what PyTorch cannot express") {
  ScenarioInput input;
  input.devices = 2;
  input.microbatches = 1;
  input.schedule = "1f1b-split";
  const PreparedRun run = prepare_run(input);
  const TorchCsvExport exported = write_torch_csv(run.scenario, run.schedule);
  CHECK(exported.text == "0F0,0I0,0W0\n1F0,1I0,1W0\n");
  // PyTorch's Schedule1F1B rejects m < p (oracle O-19): ppsim generates it and warns on export.
  input.schedule = "1f1b";
  const PreparedRun small = prepare_run(input);
  CHECK(write_torch_csv(small.scenario, small.schedule).warnings ==
        std::vector<std::string>{"PyTorch Schedule1F1B rejects m = 1 < p = 2"});
  Schedule with_recompute = small.schedule;
  with_recompute.device_ops[0].insert(with_recompute.device_ops[0].begin() + 1,
                                      Op::make(OpKind::recompute_forward, 0, 0));
  CHECK_THROWS_WITH_AS(write_torch_csv(small.scenario, with_recompute),
                       "op R(0,0) has no PyTorch action (the torch CSV format has no recomputation)", Error);
}
