// base/progress: ProgressCounter reports the start, then each completed step in order, from any
// number of worker threads.
#include "base/progress.h"

#include "base/parallel.h"

#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <tuple>
#include <vector>

using ppsim::ProgressCounter;
using ppsim::ProgressFn;

namespace {

using Report = std::tuple<std::size_t, std::size_t, std::string>;

ProgressFn recorder(std::vector<Report> &reports) {
  return [&reports](std::size_t done, std::size_t total, std::string_view step) {
    reports.emplace_back(done, total, std::string(step));
  };
}

} // namespace

TEST_CASE("ProgressCounter reports the start, each step and several steps at once") {
  std::vector<Report> reports;
  ProgressCounter counter(recorder(reports), 5);
  counter.step_done("first");
  counter.steps_done(3, "three quick ones");
  counter.steps_done(0, "none"); // nothing completed: no report
  counter.step_done();
  CHECK(reports ==
        std::vector<Report>{{0, 5, ""}, {1, 5, "first"}, {4, 5, "three quick ones"}, {5, 5, ""}});
}

TEST_CASE("ProgressCounter without a function reports nothing and does not fail") {
  ProgressCounter counter({}, 3);
  counter.step_done("ignored");
  counter.steps_done(2);
}

TEST_CASE("ProgressCounter from worker threads: done grows by one, never backwards") {
  constexpr std::size_t kSteps = 2000;
  std::vector<Report> reports;
  ProgressCounter counter(recorder(reports), kSteps);
  std::atomic<std::size_t> next{0};
  ppsim::run_on_threads(8, [&] {
    for (std::size_t k = next++; k < kSteps; k = next++)
      counter.step_done();
  });
  REQUIRE(reports.size() == kSteps + 1);
  for (std::size_t k = 0; k < reports.size(); ++k)
    CHECK(std::get<0>(reports[k]) == k);
}
