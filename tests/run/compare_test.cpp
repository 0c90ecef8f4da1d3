// The ranking every command shares (run/compare.h, docs/compare.md): ordered by makespan, pruned
// without changing the winner, the same whatever the thread count.
#include "run/compare.h"

#include "tests/sim/test_support.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <random>

using namespace ppsim;
using ppsim::testing::drawn_stage_input;
using ppsim::testing::uniform_input;

namespace {

RankRequest request_for(const RunInput &input, std::vector<std::string> schedules,
                        std::vector<std::optional<double>> caps) {
  RankRequest request;
  request.base = input;
  request.base.remat_relative_gap = 0; // proven optima: the ILP's plan does not depend on timing
  request.schedules = std::move(schedules);
  request.caps = std::move(caps);
  request.policies = default_policies(request.base, true);
  return request;
}

// The fastest run that fits among every (schedule, policy) pair evaluated on its own, as a
// sweep over both axes evaluates them: what the pruned ranking must name.
std::optional<Rational> exhaustive_best(const RankRequest &request, double cap) {
  std::optional<Rational> best;
  for (const std::string &schedule : request.schedules) {
    for (const std::string &policy : request.policies) {
      RunInput input = request.base;
      input.schedule = schedule;
      input.remat_policy = policy;
      input.cap_activations = cap;
      try {
        const Evaluation run = evaluate_run(input);
        if (run.fits() && (!best || run.makespan() < *best))
          best = run.makespan();
      } catch (const Error &) {
        // n/a: the schedule cannot run here, or no plan meets the cap
      }
    }
  }
  return best;
}

} // namespace

TEST_CASE("the ranking orders runs by makespan, and the winner changes with the cap") {
  RunInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.costs_per_device = true; // V shapes split the work over 2 chunks, on their own tick scale
  const RankRequest request = request_for(
      input, {"1f1b", "1f1b-split", "zb-h1", "zb-h2", "zb-v", "v-half"}, {8.0, 2.0});
  const std::vector<Ranking> rankings = rank_runs(request);
  REQUIRE(rankings.size() == 2);
  for (const Ranking &ranking : rankings) {
    bool over_cap_seen = false;
    for (std::size_t r = 0; r < ranking.runs.size(); ++r) {
      const RankedRun &run = ranking.runs[r];
      REQUIRE(run.ran()); // every schedule runs p = 4, m = 8
      if (!run.fits()) {
        over_cap_seen = true;
        continue;
      }
      CHECK_FALSE(over_cap_seen); // the runs that fit come first
      if (r > 0 && ranking.runs[r - 1].fits())
        CHECK_FALSE(run.evaluation->makespan() < ranking.runs[r - 1].evaluation->makespan());
      CHECK(run.evaluation->lower_bound().has_value()); // a run that fits has its bounds
    }
  }
  // Plenty of memory: ZB-H2 has no bubble but the fill and drain (3 + 8 x 3 + 3 = 30).
  const RankedRun *roomy = rankings[0].winner();
  REQUIRE(roomy != nullptr);
  CHECK(roomy->policy == "none");
  // Tight memory: the winner recomputes, and is slower.
  const RankedRun *tight = rankings[1].winner();
  REQUIRE(tight != nullptr);
  CHECK(tight->policy != "none");
  CHECK(roomy->evaluation->makespan() < tight->evaluation->makespan());
  // Each schedule's best run: one per schedule, in ranking order.
  const std::vector<const RankedRun *> best = rankings[1].best_per_schedule();
  CHECK(best.size() == request.schedules.size());
  CHECK(best.front() == tight);
}

TEST_CASE("the pruned ranking names the winner of every (schedule, policy) pair, on random "
          "scenarios, whatever the thread count") {
  std::mt19937 random(2711);
  std::uniform_int_distribution<std::int64_t> cost(7, 29);
  for (int trial = 0; trial < 6; ++trial) {
    const int p = 2 + trial % 2;
    const int m = 2 * p + trial % 3;
    RunInput input =
        drawn_stage_input(p, m, p, {1, 10}, 10, [&] { return cost(random); });
    const double cap = trial % 2 == 0 ? 1.5 : 2.0;
    RankRequest request = request_for(input, {"gpipe", "1f1b", "zb-h1", "zb-h2"}, {cap});
    request.threads = 1;
    const Ranking serial = rank_runs(request).front();
    request.threads = 3;
    const Ranking parallel = rank_runs(request).front();
    CAPTURE(trial);
    REQUIRE(serial.runs.size() == parallel.runs.size());
    for (std::size_t r = 0; r < serial.runs.size(); ++r) {
      CHECK(serial.runs[r].schedule == parallel.runs[r].schedule);
      CHECK(serial.runs[r].policy == parallel.runs[r].policy);
    }
    const std::optional<Rational> best = exhaustive_best(request, cap);
    const RankedRun *winner = serial.winner();
    REQUIRE(best.has_value() == (winner != nullptr));
    if (winner != nullptr)
      CHECK(winner->evaluation->makespan() == *best);
  }
}

TEST_CASE("runs that cannot meet the cap are ranked last, with the reason") {
  RunInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
  const Ranking ranking = rank_runs(request_for(input, {"1f1b", "zb-h1"}, {0.25})).front();
  CHECK(ranking.winner() == nullptr);
  int over_cap = 0;
  for (const RankedRun &run : ranking.runs) {
    if (run.ran()) {
      CHECK(run.policy != "ilp"); // none and full run, over the cap
      CHECK_FALSE(run.fits());
      ++over_cap;
    } else {
      CHECK(run.unavailable.find("within cap 0.25") != std::string::npos);
    }
  }
  CHECK(over_cap == 4);
  CHECK(ranking.runs.back().ran() == false);
}

TEST_CASE("the ranking reports each recomputing run, and the pairs it need not try") {
  RunInput input = uniform_input(2, 4, {1, 1}, {1, 1}, {1, 1});
  std::vector<std::string> reports;
  const auto progress = [&](std::size_t done, std::size_t total, std::string_view step) {
    reports.push_back(fmt::format("{}/{} {}", done, total, step));
  };
  RankRequest request = request_for(input, {"1f1b", "gpipe"}, {2.0});
  request.policies = {"none", "full"};
  const Ranking ranking = rank_runs(request, progress).front();
  // 1F1B fits 2 as it is; GPipe holds 4, and with F = B = W its makespan is 1F1B's: full
  // recomputation can only make it slower, so it is not tried.
  CHECK(reports == std::vector<std::string>{
                       "0/2 ", "1/2 K = 2: 1 schedules fit as they are or cannot run",
                       "2/2 full, K = 2: 1 schedules not tried"});
  CHECK(ranking.not_tried == std::vector<std::string>{"gpipe + full"});
  CHECK(ranking.winner()->schedule == "1f1b");
  // Under K = 1.5 neither fits: both recompute, one step each.
  reports.clear();
  request.caps = {1.5};
  request.threads = 1;
  rank_runs(request, progress);
  CHECK(reports == std::vector<std::string>{"0/2 ", "1/2 1f1b + full, K = 1.5",
                                            "2/2 gpipe + full, K = 1.5"});
}

TEST_CASE("a schedule that already recomputes runs as generated") {
  RunInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  const Ranking ranking = rank_runs(request_for(input, {"full-remat"}, {1.0})).front();
  REQUIRE(ranking.winner() != nullptr);
  CHECK(ranking.winner()->policy == "none");
  CHECK(ranking.winner()->evaluation->simulation.metrics.max_peak_activations() == 1);
}

TEST_CASE("the default policies follow the cap and the cost file") {
  RunInput input;
  CHECK(default_policies(input, false) == std::vector<std::string>{"none"});
  CHECK(default_policies(input, true) == std::vector<std::string>{"none", "full", "ilp"});
  input.costs_file = "model.csv";
  CHECK(default_policies(input, true) ==
        std::vector<std::string>{"none", "full", "selective", "ilp"});
  input.remat_policy = "none,ilp";
  input.origins["remat.policy"] = {"s.toml", 3, "remat.policy"};
  CHECK(default_policies(input, true) == std::vector<std::string>{"none", "ilp"});
  CHECK(split_names("a,,b,") == std::vector<std::string>{"a", "b"});
}
