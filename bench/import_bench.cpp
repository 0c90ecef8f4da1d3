// Trace import at scale (issue 32: quadratic paths). `BM_kineto_forward_allocations/N`: N forward
// ranges on one thread, one allocator event in each (the bytes a forward keeps, summed per range).
// `BM_kineto_nested_operators/N`: a backward range holding a chain of N nested operators and N
// kernels launched from inside the chain at decreasing depth (each launch's innermost operator,
// for the B/W split). The trace text is built outside the timed region. Figures and commands:
// docs/performance.md, "Trace import".
#include "profiler/kineto_import.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <string>

namespace {

using namespace ppsim::profiler;

std::string complete_event(const char *category, const std::string &name, std::uint64_t ts,
                           std::uint64_t dur, const std::string &args = "{}") {
  return fmt::format(R"({{"ph": "X", "cat": "{}", "name": "{}", "pid": 1, "tid": 1, "ts": {}, )"
                     R"("dur": {}, "args": {}}})",
                     category, name, ts, dur, args);
}

std::string forward_allocations(std::int64_t ranges) {
  std::string text = "[";
  for (std::int64_t k = 0; k < ranges; ++k) {
    text += complete_event("user_annotation", fmt::format("L00.F.mb{}", k % 1000), 10 * k, 10);
    text += fmt::format(R"(, {{"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, )"
                        R"("ts": {}, "args": {{"Device Type": 1, "Bytes": 4096}}}},)",
                        10 * k + 5);
  }
  text.back() = ']';
  return text;
}

std::string nested_operators(std::int64_t depth) {
  const std::uint64_t n = static_cast<std::uint64_t>(depth);
  std::string text = "[" + complete_event("user_annotation", "L00.F.mb0", 0, 1) + ",";
  text += complete_event("cpu_op", "aten::linear", 0, 1,
                         R"({"Input Dims": [[16, 32], [64, 32]]})") + ",";
  text += complete_event("user_annotation", "L00.BW.mb0", 10, 4 * n) + ",";
  for (std::uint64_t k = 0; k < n; ++k)
    text += complete_event("cpu_op", "aten::mm", 10 + k, 4 * n - 2 * k - 2,
                           R"({"Input Dims": [[16, 64], [64, 32]]})") + ",";
  // Operator j is [10 + j, 4n + 8 - j): a launch at 10 + 3n + k lies in operators 0 .. n-3-k,
  // k + 2 levels above the deepest one.
  for (std::uint64_t k = 0; k < n; ++k) {
    const std::string correlation = fmt::format(R"({{"correlation": {}}})", k);
    text += complete_event("cuda_runtime", "cudaLaunchKernel", 10 + 3 * n + k, 1, correlation) +
            "," + complete_event("kernel", "gemm", 10 + 3 * n + k + 1, 1, correlation) + ",";
  }
  text.back() = ']';
  return text;
}

void run(benchmark::State &state, const std::string &text) {
  for (auto _ : state) {
    const KinetoImport import = parse_kineto_trace(text, "bench.json");
    benchmark::DoNotOptimize(import.phases.size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_kineto_forward_allocations(benchmark::State &state) {
  run(state, forward_allocations(state.range(0)));
}
BENCHMARK(BM_kineto_forward_allocations)->Arg(25'000)->Arg(250'000)->Unit(benchmark::kMillisecond);

void BM_kineto_nested_operators(benchmark::State &state) {
  run(state, nested_operators(state.range(0)));
}
BENCHMARK(BM_kineto_nested_operators)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);

} // namespace
