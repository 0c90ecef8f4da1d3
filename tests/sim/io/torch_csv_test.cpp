// PyTorch pipelining CSV (docs/scenario.md, "PyTorch CSV schedules"): vocabulary translation, idle
// cells, ignored actions, overlapped pairs, placement inference, errors, and export.
#include "sim/io/torch_csv.h"

#include "base/error.h"
#include "run/prepare.h"
#include "sim/schedules/registry.h"
#include "tests/base/error_support.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

using namespace ppsim;

namespace {

RunInput generated_input(int devices, int microbatches, const std::string &schedule) {
  RunInput input;
  input.devices = devices;
  input.microbatches = microbatches;
  input.schedule = schedule;
  return input;
}

// Every registered generator at p = 4, m = 8 that generates and that PyTorch's CSV can express
// (not recomputation, not two pipes), with its export (idle cells when `spacing`).
std::vector<std::pair<PreparedRun, TorchCsvExport>> exportable_runs(bool spacing) {
  std::vector<std::pair<PreparedRun, TorchCsvExport>> runs;
  for (const ScheduleInfo &info : schedule_registry()) {
    try {
      PreparedRun run = prepare_run(generated_input(4, 8, info.name));
      TorchCsvExport exported = write_torch_csv(run.scenario, run.schedule, spacing);
      runs.emplace_back(std::move(run), std::move(exported));
    } catch (const Error &) {
      // not generated at this size, or no PyTorch form
    }
  }
  return runs;
}

} // namespace

TEST_CASE("import translates F, I, B, W and drops idle cells") {
  // PyTorch I = input gradient (ppsim B), B = full backward (ppsim BW); older PyTorch keeps the
  // idle cells, newer ones drop them and append REDUCE_GRAD (oracle O-22): both are accepted.
  const ImportedSchedule imported =
      parse_torch_csv("0F0,,0F1,None,0I0,0W0,0B1,0REDUCE_GRAD\n,1F0,1B0,1F1,1B1\n", "s.csv");
  REQUIRE(imported.schedule.device_count() == 2);
  CHECK(imported.schedule.device_ops[0] == std::vector<Op>{Op::make(OpKind::forward, 0, 0),
                                                           Op::make(OpKind::forward, 0, 1),
                                                           Op::make(OpKind::backward_input, 0, 0),
                                                           Op::make(OpKind::backward_weight, 0, 0),
                                                           Op::make(OpKind::backward_full, 0, 1)});
  CHECK(imported.schedule.device_ops[1].size() == 4);
  CHECK(imported.placement == std::vector<int>{0, 1});
  CHECK(imported.microbatches == 2);
  CHECK(imported.dropped == std::vector<std::string>{"REDUCE_GRAD"});
  CHECK(imported.schedule.name == "file:s.csv");
}

TEST_CASE("overlapped pairs and a V placement are inferred from the rows") {
  // Device 0 holds stages 0 and 3, device 1 stages 1 and 2 (V placement, p = 2).
  const ImportedSchedule imported =
      parse_torch_csv("0F0,3F0,(0F1;3B0)OVERLAP_F_B\n1F0,2F0\n", "v.csv");
  CHECK(imported.placement == std::vector<int>{0, 1, 1, 0});
  CHECK(imported.chunks == 2);
  CHECK(imported.schedule.device_ops[0][2] ==
        Op::overlap({OpKind::forward, 0, 1}, {OpKind::backward_full, 3, 0}));
}

TEST_CASE("malformed cells name file, line and cell") {
  testing::check_errors(
      [](const std::string &text) { parse_torch_csv(text, "bad.csv"); },
      {{"0F0\n1Q0\n", "bad.csv:2: action '1Q0': unknown action 'Q' (expected F, I, B, W, BW or a "
                      "communication action)"},
       {"F0\n", "bad.csv:1: action 'F0': expected <stage><action><microbatch>, such as 2F0"},
       {"0F\n", "bad.csv:1: action '0F': expected a microbatch number after the action"},
       {"(0F0;1F0)OVERLAP_F_B\n", "bad.csv:1: action '(0F0;1F0)OVERLAP_F_B': an overlapped action "
                                  "pairs a forward with a backward"},
       {"0F0\n0B0\n", "bad.csv:2: stage 0 appears on device 0 and device 1"},
       {"0F0\n2F0\n", "bad.csv: stage 1 never appears"},
       // issue_32: a stage number alone once allocated a table of that size (8 GB) first.
       {"2147483647F0", "bad.csv: stage 0 never appears"},
       {"99999999999F0\n", "bad.csv:1: action '99999999999F0': the stage number is out of range"},
       {"0F2147483647\n",
        "bad.csv:1: action '0F2147483647': the microbatch number is out of range"},
       {"\n\n", "bad.csv: the schedule has no actions"}});
}

TEST_CASE("export writes PyTorch actions and refuses what PyTorch cannot express") {
  RunInput input = generated_input(2, 1, "1f1b-split");
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
  CHECK_THROWS_WITH_AS(
      write_torch_csv(small.scenario, with_recompute),
      "op R(0,0) has no PyTorch action (the torch CSV format has no recomputation)", Error);
}

TEST_CASE(
    "issue_16 PyTorch's older action names (B input gradient, BW full backward) are detected") {
  // A B and a W of one (stage, microbatch), no I: B is the input gradient.
  const ImportedSchedule split = parse_torch_csv("0F0,0B0,0W0\n", "old.csv");
  CHECK(split.older_vocabulary);
  CHECK(split.schedule.device_ops[0][1] == Op::make(OpKind::backward_input, 0, 0));
  // BW anywhere: the older names; a B elsewhere in the file is then an input gradient too.
  const ImportedSchedule mixed = parse_torch_csv("0F0,0F1,0BW0,0B1,0W1\n", "old.csv");
  CHECK(mixed.older_vocabulary);
  CHECK(mixed.schedule.device_ops[0][2] == Op::make(OpKind::backward_full, 0, 0));
  CHECK(mixed.schedule.device_ops[0][3] == Op::make(OpKind::backward_input, 0, 1));
  // The current names stay as they are: B alone is the full backward.
  const ImportedSchedule current = parse_torch_csv("0F0,0F1,0B0,0I1,0W1\n", "new.csv");
  CHECK_FALSE(current.older_vocabulary);
  CHECK(current.schedule.device_ops[0][2] == Op::make(OpKind::backward_full, 0, 0));
}

TEST_CASE("issue_16 every generator PyTorch can express round-trips through both vocabularies") {
  const auto runs = exportable_runs(false);
  CHECK(runs.size() >= 15);
  for (const auto &[run, exported] : runs) {
    CAPTURE(run.schedule.name);
    CHECK(parse_torch_csv(exported.text, "new.csv").schedule.device_ops == run.schedule.device_ops);
    // The older names: full backward B -> BW, input gradient I -> B.
    std::string older;
    for (std::size_t i = 0; i < exported.text.size(); ++i) {
      const char c = exported.text[i];
      const bool action = i > 0 && exported.text[i - 1] >= '0' && exported.text[i - 1] <= '9';
      older += action && c == 'B'   ? std::string("BW")
               : action && c == 'I' ? std::string("B")
                                    : std::string(1, c);
    }
    const ImportedSchedule imported = parse_torch_csv(older, "old.csv");
    const bool has_backward = exported.text.find('B') != std::string::npos ||
                              exported.text.find('I') != std::string::npos;
    CHECK(imported.older_vocabulary == has_backward);
    CHECK(imported.schedule.device_ops == run.schedule.device_ops);
  }
}

TEST_CASE("issue_16 an inferred m blames the cell that set it (microbatches numbered from 1)") {
  const std::string path = "torch_from_one.csv";
  {
    std::ofstream file(path);
    file << "0F1,0F2,0B1,0B2\n1F1,1F2,1B1,1B2\n";
  }
  RunInput input;
  input.schedule_file = path;
  CHECK_THROWS_WITH_AS(
      prepare_run(input),
      "torch_from_one.csv:1: action '0F2' sets m = 3 (1 + the largest microbatch id), but "
      "stage 0 has no forward of microbatch 0; number microbatches from 0, or give -m",
      Error);
  std::remove(path.c_str());
}

TEST_CASE("issue_16 --torch-spacing: PyTorch's idle cells by a unit-step lock-step replay") {
  const PreparedRun gpipe = prepare_run(generated_input(3, 2, "gpipe"));
  // Step by step: a forward waits for the previous stage's, a backward for the next stage's
  // (the last stage for its own forward), each seen in an earlier step.
  CHECK(write_torch_csv(gpipe.scenario, gpipe.schedule, true).text == "0F0,0F1,,,,,0B0,0B1\n"
                                                                      ",1F0,1F1,,,1B0,1B1\n"
                                                                      ",,2F0,2F1,2B0,2B1\n");
  // Every exportable generator: the spaced file imports back to the same order.
  for (const auto &[run, spaced] : exportable_runs(true)) {
    CAPTURE(run.schedule.name);
    CHECK(parse_torch_csv(spaced.text, "spaced.csv").schedule.device_ops ==
          run.schedule.device_ops);
  }
}

TEST_CASE("issue_32 a 17 MB action is one located line, cut (was an internal error past 16 MiB)") {
  const std::string action(17'000'000, 'x');
  CHECK(testing::error_message([&] { parse_torch_csv(action + ",0F0\n", "long.csv"); }) ==
        "long.csv:1: action '" + std::string(80, 'x') +
            "... (17000000 characters)': expected <stage><action><microbatch>, such as 2F0");
}
