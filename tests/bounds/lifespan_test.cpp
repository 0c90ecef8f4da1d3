// Lifespan memory predictor (docs/bounds.md, "Lifespan memory predictor") against simulated peaks,
// looping over the registry: every schedule whose stable phase repeats one microbatch block must be
// predicted exactly; the others (GPipe, looped BFS, Hanayo, zb-auto, full-remat, interleaved
// groups) keep memory growing with m or repeat per group of microbatches and are not periodic here.
// V-Min is left out: for p = 2 and p = 5 its stable phase alternates between microbatch patterns
// (peaks 1.5 and 3 where one measured microbatch predicts 1 and 2.5), so one microbatch is not its
// period.
#include "base/error.h"
#include "base/index.h"
#include "bounds/lifespan.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

using ppsim::testing::uniform_input;

TEST_CASE("the predictor equals the simulated peak on periodic registered schedules") {
  const std::set<std::string> periodic{"1f1b",     "1f1b-split", "zb-h1",        "zb-h2",  "zb-1p",
                                       "zb-2p",    "zb-v",       "zb-v-greedy",  "v-auto", "v-half",
                                       "dualpipe", "dualpipev",  "allremat-1f1b"};
  int checked = 0;
  for (const ppsim::ScheduleInfo &info : ppsim::schedule_registry()) {
    if (periodic.count(info.name) == 0)
      continue;
    for (const int p : {2, 3, 4}) {
      ppsim::testing::Run run;
      try {
        run = ppsim::testing::run_schedule(info.name, uniform_input(p, 32, {1, 1}, {1, 1}, {1, 1}));
      } catch (const ppsim::Error &) {
        continue; // outside the generator's range (odd p for DualPipe)
      }
      const ppsim::MemoryPrediction prediction =
          ppsim::predict_peak_activations(run.scenario, run.schedule, run.simulation.timing);
      CAPTURE(info.name);
      CAPTURE(p);
      CHECK(prediction.reference_microbatch == run.scenario.microbatches / 2);
      for (int g = 0; g < p; ++g) {
        const double simulated = run.simulation.metrics.devices[ppsim::at(g)].peak_activations;
        CHECK(prediction.predicted_peak[ppsim::at(g)] == simulated);
        CHECK(prediction.lifespan_bound[ppsim::at(g)] >= simulated);
      }
      ++checked;
    }
  }
  CHECK(checked >= 9); // at least 1f1b, 1f1b-split and zb-h1 at three sizes
}

TEST_CASE("1F1B: period F + Bf and lifespan bound p - i (docs/bounds.md)") {
  const ppsim::testing::Run run =
      ppsim::testing::run_schedule("1f1b", uniform_input(4, 16, {1, 1}, {2, 1}, {0, 1}));
  const ppsim::MemoryPrediction prediction =
      ppsim::predict_peak_activations(run.scenario, run.schedule, run.simulation.timing);
  CHECK(prediction.period == ppsim::Ticks{3});
  CHECK(prediction.lifespan_bound == std::vector<double>{4, 3, 2, 1});
  CHECK(prediction.predicted_peak == std::vector<double>{4, 3, 2, 1});
}

TEST_CASE("ZB-V: two chunks that do not peak together make the ceiling sum loose") {
  // Per chunk ceil(l/T) sums to 4.5 microbatch units on p = 4 while the stable phase holds 4
  // (8 chunks, oracle O-11); the periodic count finds 4.
  const ppsim::testing::Run run =
      ppsim::testing::run_schedule("zb-v", uniform_input(4, 32, {1, 1}, {1, 1}, {1, 1}));
  const ppsim::MemoryPrediction prediction =
      ppsim::predict_peak_activations(run.scenario, run.schedule, run.simulation.timing);
  CHECK(prediction.period == ppsim::Ticks{6});
  CHECK(prediction.lifespan_bound == std::vector<double>{4.5, 4.5, 4.5, 4.5});
  CHECK(prediction.predicted_peak == std::vector<double>{4, 4, 4, 4});
}

TEST_CASE("predictor errors") {
  const ppsim::testing::Run one =
      ppsim::testing::run_schedule("1f1b", uniform_input(2, 1, {1, 1}, {1, 1}, {1, 1}));
  CHECK_THROWS_WITH(
      ppsim::predict_peak_activations(one.scenario, one.schedule, one.simulation.timing),
      "the lifespan predictor needs at least 2 microbatches to measure a period");
}

TEST_CASE("issue_12 at small m the prediction counts only existing microbatches and stays above "
          "the peak") {
  // Before: the copies of the reference microbatch shifted by k periods were counted whether or
  // not microbatch m/2 + k exists, and T was one gap at stage 0 (the end of the warm-up at
  // m = 8, p = 4), so 1F1B predicted 14 where 2 were resident (m = 2) and 2 where 4 were (m = 8).
  const std::set<std::string> periodic{"1f1b",  "1f1b-split", "zb-h1", "zb-h2",
                                       "zb-1p", "zb-2p",      "zb-v",  "v-half"};
  for (const std::string &name : periodic) {
    for (int m = 2; m <= 10; ++m) {
      CAPTURE(name);
      CAPTURE(m);
      ppsim::testing::Run run;
      try {
        run = ppsim::testing::run_schedule(name, uniform_input(4, m, {1, 1}, {1, 1}, {1, 1}));
      } catch (const ppsim::Error &) {
        continue;
      }
      const ppsim::MemoryPrediction prediction =
          ppsim::predict_peak_activations(run.scenario, run.schedule, run.simulation.timing);
      for (int g = 0; g < 4; ++g) {
        const auto d = ppsim::at(g);
        CHECK(prediction.predicted_peak[d] >= run.simulation.metrics.devices[d].peak_activations);
        CHECK(prediction.predicted_peak[d] <= m);
      }
    }
  }
  const ppsim::testing::Run eight =
      ppsim::testing::run_schedule("1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  const ppsim::MemoryPrediction prediction =
      ppsim::predict_peak_activations(eight.scenario, eight.schedule, eight.simulation.timing);
  CHECK(prediction.period == ppsim::Ticks{3});
  CHECK(prediction.predicted_peak == std::vector<double>{4, 3, 2, 1});
}
