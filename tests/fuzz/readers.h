#pragma once
// ppsim's input readers by name, for the fuzz targets (tests/fuzz/fuzz_reader.cpp) and the replay
// of their seed corpus as a test (tests/fuzz/corpus_test.cpp): the bytes go to the reader, and a
// ppsim::Error is the expected answer to bad input.
#include "costs/cost_file.h"
#include "profiler/event_dump.h"
#include "profiler/kineto_import.h"
#include "profiler/nsys_import.h"
#include "remat/plan.h"
#include "run/sweep.h"
#include "run/scenario_file.h"
#include "sim/io/torch_csv.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim::fuzz {

/// The readers, each with its folder of seeds in tests/fuzz/corpus/.
inline const std::vector<std::string> &reader_names() {
  static const std::vector<std::string> names{"scenario", "torch_csv", "cost_csv", "cost_json",
                                              "ndjson",   "nsys",      "sweep",    "plan",
                                              "kineto"};
  return names;
}

/// Hands `text` to the reader named `reader`; throws what the reader throws.
inline void read_input(std::string_view reader, std::string_view text) {
  const std::string source = "fuzz";
  if (reader == "scenario") {
    (void)parse_scenario(text, source);
  } else if (reader == "torch_csv") {
    (void)parse_torch_csv(text, source);
  } else if (reader == "cost_csv") {
    (void)parse_cost_csv(text, source);
  } else if (reader == "cost_json") {
    (void)parse_cost_json(text, source);
  } else if (reader == "ndjson") {
    (void)profiler::read_events_ndjson(text, source);
  } else if (reader == "nsys") {
    (void)profiler::nsys_pass_summaries(profiler::parse_nsys_projection_csv(text, source));
  } else if (reader == "sweep") {
    // The base scenario of a fuzzed sweep is a fixed small one; every point is built.
    const Sweep sweep = parse_sweep(text, source, "", [](const std::string &path) {
      return parse_scenario("[cluster]\ndevices = 2\n[pipeline]\nmicrobatches = 2\n", path);
    });
    for (std::size_t k = 0; k < std::min<std::size_t>(sweep.size(), 64); ++k)
      (void)sweep.point(k);
  } else if (reader == "plan") {
    (void)parse_plan_csv(text, source, 4, 8);
  } else if (reader == "kineto") {
    (void)profiler::parse_kineto_trace(text, source);
  } else {
    throw std::invalid_argument("no reader named " + std::string(reader));
  }
}

} // namespace ppsim::fuzz
