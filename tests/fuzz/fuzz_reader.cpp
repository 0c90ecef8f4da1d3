// libFuzzer target for one of ppsim's input readers (docs/reliability.md, "Fuzzing"): the bytes
// are handed to the reader named by PPSIM_FUZZ_READER; a ppsim::Error is the expected answer to
// bad input, anything else that escapes (another exception, a crash, a sanitizer report, a hang)
// is a finding. Built by -DPPSIM_FUZZ=ON with clang, one executable per reader.
#include "base/error.h"
#include "costs/cost_file.h"
#include "profiler/event_dump.h"
#include "profiler/kineto_import.h"
#include "profiler/nsys_import.h"
#include "remat/plan.h"
#include "run/sweep.h"
#include "sim/io/scenario_toml.h"
#include "sim/io/torch_csv.h"

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string_view>

namespace {

void read(std::string_view text) {
  using namespace ppsim;
  const std::string source = "fuzz";
#if PPSIM_FUZZ_READER == 0
  (void)parse_scenario(text, source);
#elif PPSIM_FUZZ_READER == 1
  (void)parse_torch_csv(text, source);
#elif PPSIM_FUZZ_READER == 2
  (void)parse_cost_csv(text, source);
#elif PPSIM_FUZZ_READER == 3
  (void)parse_cost_json(text, source);
#elif PPSIM_FUZZ_READER == 4
  (void)profiler::read_events_ndjson(text, source);
#elif PPSIM_FUZZ_READER == 5
  (void)profiler::nsys_pass_summaries(profiler::parse_nsys_projection_csv(text, source));
#elif PPSIM_FUZZ_READER == 6
  // The base scenario of a fuzzed sweep is a fixed small one; every point is built.
  const Sweep sweep = parse_sweep(text, source, "", [](const std::string &path) {
    return parse_scenario("[cluster]\ndevices = 2\n[pipeline]\nmicrobatches = 2\n", path);
  });
  for (std::size_t k = 0; k < std::min<std::size_t>(sweep.size(), 64); ++k)
    (void)sweep.point(k);
#elif PPSIM_FUZZ_READER == 7
  (void)parse_plan_csv(text, source, 4, 8);
#elif PPSIM_FUZZ_READER == 8
  (void)profiler::parse_kineto_trace(text, source);
#else
#error "PPSIM_FUZZ_READER names no reader"
#endif
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  try {
    read(std::string_view(reinterpret_cast<const char *>(data), size));
  } catch (const ppsim::Error &) {
    // The one-line answer to bad input.
  } catch (const std::exception &error) {
    std::fprintf(stderr, "escaped: %s\n", error.what());
    __builtin_trap();
  }
  return 0;
}
