// Megatron interleaved 1F1B and looped BFS (docs/schedules.md, "interleaved-1f1b and looped-bfs";
// oracles O-8, O-9, O-10, O-19).
#include "base/error.h"
#include "base/index.h"
#include "sim/schedules/families.h"
#include "sim/schedules/megatron_table.h"
#include "tests/sim/schedules/oracle_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>

using namespace ppsim;
using namespace ppsim::testing;
using ppsim::schedules::MicrobatchChunk;

namespace {

std::vector<int> microbatch_row(const std::vector<MicrobatchChunk> &table) {
  std::vector<int> row;
  for (const MicrobatchChunk &entry : table)
    row.push_back(entry.microbatch);
  return row;
}

// The sentence of a refusal, "" when there is none.
std::string message(const std::optional<ppsim::Error> &refusal) {
  return refusal ? std::string(refusal->what()) : std::string();
}

std::vector<int> chunk_row(const std::vector<MicrobatchChunk> &table) {
  std::vector<int> row;
  for (const MicrobatchChunk &entry : table)
    row.push_back(entry.chunk);
  return row;
}

ppsim::GeneratorOptions group(int g) {
  ppsim::GeneratorOptions options;
  options.group_size = g;
  return options;
}

} // namespace

TEST_CASE("O-9 Megatron schedule table") {
  const auto odd = ppsim::schedules::megatron_schedule_table(5, 2, 3); // p = 2, g = 3, m = 5
  CHECK(microbatch_row(odd) == std::vector<int>{0, 1, 2, 0, 1, 2, 3, 4, 3, 4});
  CHECK(chunk_row(odd) == std::vector<int>{0, 0, 0, 1, 1, 1, 0, 0, 1, 1});
  const auto even = ppsim::schedules::megatron_schedule_table(4, 2, 2); // p = 2, g = 2, m = 4
  CHECK(microbatch_row(even) == std::vector<int>{0, 1, 0, 1, 2, 3, 2, 3});
  CHECK(chunk_row(even) == std::vector<int>{0, 0, 1, 1, 0, 0, 1, 1});
}

TEST_CASE("O-9 / O-19 group-size errors, as Megatron's ValueError and RuntimeError") {
  using ppsim::schedules::megatron_group_size_refusal;
  CHECK(message(megatron_group_size_refusal(2, 4, 5)) ==
        "schedule 'interleaved-1f1b': group size g = 5 is larger than the number of microbatches "
        "m = 4");
  CHECK(
      message(megatron_group_size_refusal(4, 8, 3)) ==
      "schedule 'interleaved-1f1b': group size g = 3 is smaller than the number of devices p = 4");
  CHECK(message(megatron_group_size_refusal(4, 10, 4)) ==
        "schedule 'interleaved-1f1b': m mod g = 2 (m = 10, g = 4) is between 1 and p - 1 = 3, "
        "which leaves dependency bubbles");
  CHECK_FALSE(megatron_group_size_refusal(2, 5, 3)); // m mod g = 2 >= p
  CHECK_FALSE(megatron_group_size_refusal(4, 8, 4));

  // Through the generator: Megatron's g = p = 4 rejects m = 10; the default is PyTorch's
  // grouping, 2 rounds of 5, the same as --group-size 5.
  const auto input = uniform_input(4, 10, {1, 1}, {1, 1}, {1, 1}, {0, 1}, 2);
  CHECK_THROWS_AS(run_schedule("interleaved-1f1b", input, group(4)), ppsim::Error);
  const auto accepted = run_schedule("interleaved-1f1b", input, group(5));
  CHECK(accepted.schedule.op_count() == 4u * 2 * 10 * 2);
  CHECK(run_schedule("interleaved-1f1b", input).schedule.device_ops ==
        accepted.schedule.device_ops);
  CHECK_THROWS_WITH_AS(
      run_schedule("interleaved-1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}, {0, 1}, 1)),
      "schedule 'interleaved-1f1b' needs v >= 2 chunks per device, got 1 (use "
      "'1f1b' for one chunk)",
      ppsim::Error);
}

TEST_CASE("O-8 interleaved p=4 m=8, per-chunk F=B=W=1") {
  // makespan v m (F+B+W) + (p-1)(F+B+W); device r ends 2r earlier; peak 2(p-1-r) + (v-1)g + 1.
  const auto two =
      run_schedule("interleaved-1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}, {0, 1}, 2));
  CHECK(two.units(two.simulation.metrics.makespan) == 57);
  CHECK(per_device(two, &ppsim::DeviceMetrics::end) == std::vector<double>{57, 55, 53, 51});
  CHECK(chunk_peaks(two) == std::vector<double>{11, 9, 7, 5});
  // O-10: 11 chunks on device 0 = 5.5 stage activations, Megatron's factor 1 + (p-1)/(pv) =
  // 1.375 times p = 5.5.
  CHECK(two.simulation.metrics.devices[0].peak_activations == 5.5);
  const auto four =
      run_schedule("interleaved-1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}, {0, 1}, 4));
  CHECK(four.units(four.simulation.metrics.makespan) == 105);
  CHECK(per_device(four, &ppsim::DeviceMetrics::end) == std::vector<double>{105, 103, 101, 99});
  CHECK(chunk_peaks(four) == std::vector<double>{19, 17, 15, 13});
}

TEST_CASE("interleaved full-stage row: p=4 m=8 v=2, F=1 B=2 per device, makespan 28.5") {
  // Path bound m(F+B) + (p-1)(F+B)/v = 24 + 4.5 with full-stage costs, attained.
  auto input = uniform_input(4, 8, {1, 1}, {2, 1}, {0, 1}, {0, 1}, 2);
  input.costs_per_device = true;
  const auto run = run_schedule("interleaved-1f1b", input);
  CHECK(run.simulation.metrics.makespan == ppsim::testing::ticks(run, {57, 2}));
  CHECK(chunk_peaks(run) == std::vector<double>{11, 9, 7, 5});
}

TEST_CASE("interleaved closed forms on a grid of p, v, m, g and costs") {
  // g = p, m mod p = 0: makespan (v m + p - 1)(F+B+W) with per-chunk costs (docs/schedules.md,
  // "interleaved-1f1b and looped-bfs"). Any admissible g: peak min(m v, 2(p-1-r) + (v-1)g + 1)
  // chunks.
  const std::vector<std::array<int, 3>> costs{{1, 1, 1}, {1, 2, 0}, {2, 3, 1}, {1, 1, 2}};
  int checked = 0;
  for (int p = 1; p <= 4; ++p) {
    for (int v = 2; v <= 4; ++v) {
      for (int m = 1; m <= 4 * p; ++m) {
        for (int g = p; g <= m; ++g) {
          const int remainder = m % g;
          if (remainder > 0 && remainder < p)
            continue;
          for (const auto &[f, b, w] : costs) {
            CAPTURE(p);
            CAPTURE(v);
            CAPTURE(m);
            CAPTURE(g);
            CAPTURE(f);
            CAPTURE(b);
            const auto run =
                run_schedule("interleaved-1f1b",
                             uniform_input(p, m, {f, 1}, {b, 1}, {w, 1}, {0, 1}, v), group(g));
            if (g == p && m % p == 0) {
              CHECK(run.units(run.simulation.metrics.makespan) == (v * m + p - 1) * (f + b + w));
            }
            std::vector<double> peaks;
            for (int r = 0; r < p; ++r)
              peaks.push_back(std::min(m * v, 2 * (p - 1 - r) + (v - 1) * g + 1));
            CHECK(chunk_peaks(run) == peaks);
            ++checked;
          }
        }
      }
    }
  }
  CHECK(checked > 300);
}

TEST_CASE("looped BFS: chunk by chunk forwards, reversed backwards, peak v m chunks") {
  const auto run =
      run_schedule("looped-bfs", uniform_input(2, 2, {1, 1}, {1, 1}, {0, 1}, {0, 1}, 2));
  CHECK(orders(run.schedule)[1] == "F(1,0) F(1,1) F(3,0) F(3,1) BW(3,1) BW(3,0) BW(1,1) BW(1,0)");
  for (int p = 1; p <= 4; ++p) {
    for (int v = 1; v <= 3; ++v) {
      const int m = 2 * p + 1;
      const auto grid =
          run_schedule("looped-bfs", uniform_input(p, m, {1, 1}, {2, 1}, {1, 1}, {0, 1}, v));
      CHECK(chunk_peaks(grid) == std::vector<double>(ppsim::at(p), v * m));
    }
  }
}

TEST_CASE("issue_16 interleaved 1F1B for every m PyTorch's ScheduleInterleaved1F1B accepts") {
  using ppsim::schedules::pytorch_group_size;
  using ppsim::schedules::pytorch_group_size_refusal;
  CHECK(pytorch_group_size(4, 8) == 4);  // p divides m: Megatron's g = p
  CHECK(pytorch_group_size(4, 10) == 5); // 2 rounds of 5
  CHECK(pytorch_group_size(4, 3) == 3);  // m < p: one round of all m
  CHECK_FALSE(pytorch_group_size_refusal(4, 10));
  CHECK(message(pytorch_group_size_refusal(4, 9)) ==
        "schedule 'interleaved-1f1b': m = 9 does not split into 2 rounds of equal size "
        "(PyTorch's rule for p = 4); give --group-size");
  // m < p runs (PyTorch accepts it): every op once, warm-up of (v - 1) m + 2(p - 1 - r) forwards.
  for (const int m : {1, 2, 3}) {
    CAPTURE(m);
    const auto run =
        run_schedule("interleaved-1f1b", uniform_input(4, m, {1, 1}, {1, 1}, {1, 1}, {0, 1}, 2));
    CHECK(run.schedule.op_count() == 4u * ppsim::at(m) * 2 * 2);
    CHECK(run.simulation.metrics.makespan.count() > 0);
    // Device 3 (r = p - 1): (v - 1) m warm-up forwards, one steady forward, then a backward.
    const auto &last = run.schedule.device_ops[3];
    const auto first_backward = std::find_if(last.begin(), last.end(), [](const ppsim::Op &op) {
      return op.kind() != ppsim::OpKind::forward;
    });
    CHECK(first_backward - last.begin() == std::min(m + 1, 2 * m));
  }
}

TEST_CASE(
    "issue_16 interleaved zero bubble: zb-h1 at v = 1, the ZB-H1 bubble shrunk by v at v = 2") {
  // v = 1: PyTorch's ScheduleInterleavedZeroBubble is ZB-H1 (warm-up p-1-r, W from step r on).
  for (int p = 2; p <= 5; ++p) {
    for (const int m : {1, 2, p, 2 * p, 3 * p + 1}) {
      CAPTURE(p);
      CAPTURE(m);
      if (m % std::max(1, m / p) != 0)
        continue;
      auto input = uniform_input(p, m, {1, 1}, {2, 1}, {1, 1}, {0, 1}, 1);
      CHECK(run_schedule("interleaved-zb", input).schedule.device_ops ==
            run_schedule("zb-h1", input).schedule.device_ops);
    }
  }
  // p = 4, m = 16, v = 2, a device's F = B = W = 1 (0.5 per chunk): ZB-H1's bubble
  // (p-1)(F+B-W) with chunk costs, 1.5, over the 48 of work; peak 4 activations, as ZB-H1.
  auto input = uniform_input(4, 16, {1, 2}, {1, 2}, {1, 2}, {0, 1}, 2);
  const auto zb = run_schedule("interleaved-zb", input);
  CHECK(zb.units(zb.simulation.metrics.makespan) == 49.5);
  CHECK(zb.simulation.metrics.max_peak_activations() == 4);
  const auto megatron = run_schedule("interleaved-1f1b", input);
  CHECK(megatron.units(megatron.simulation.metrics.makespan) == 52.5);
}

TEST_CASE("issue_16 interleaved-zb refuses a group size that does not divide m") {
  ppsim::GeneratorOptions options;
  options.group_size = 4;
  CHECK_THROWS_WITH_AS(
      run_schedule("interleaved-zb", uniform_input(2, 10, {1, 1}, {1, 1}, {1, 1}, {0, 1}, 2),
                   options),
      "schedule 'interleaved-zb' needs the group size to divide m, got g = 4, m = 10",
      ppsim::Error);
}
