// The ranking every command shares (run/compare.h, docs/compare.md): ordered by makespan (by
// iteration where the scenario ends one), pruned
// without changing the winner, the same whatever the thread count.
#include "run/compare.h"

#include "tests/sim/test_support.h"

#include <doctest/doctest.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
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

// The fastest run (by iteration, where the scenario ends one) that fits among every (schedule,
// policy) pair evaluated on its own, as a sweep over both axes evaluates them: what the pruned
// ranking must name.
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
        if (run.fits() && (!best || run.ranked_time() < *best))
          best = run.ranked_time();
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

TEST_CASE("issue_29 with the iteration's end the ranking goes by iteration, pruned without "
          "changing the winner") {
  // A slow optimizer on device 0: schedules that end device 0 early win although their pipeline
  // ends later (docs/compare.md, "The iteration's end").
  RunInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.costs_per_device = true;
  input.iteration_end = IterationEnd::post_validation;
  input.optimizer_step = {{4, 1}, {1, 1}, {1, 1}, {1, 1}};
  const Ranking roomy =
      rank_runs(request_for(input, {"interleaved-zb", "zb-h2", "zb-v"}, {std::nullopt})).front();
  REQUIRE(roomy.runs.size() == 3);
  // interleaved-zb's pipeline ends first (25.5) but its iteration last (29.5); zb-v and zb-h2
  // tie at 28, zb-v first by its makespan (25.5 against 27).
  std::vector<std::string> order;
  for (const RankedRun &run : roomy.runs)
    order.push_back(run.schedule);
  CHECK(order == std::vector<std::string>{"zb-v", "zb-h2", "interleaved-zb"});
  CHECK(roomy.runs.back().evaluation->makespan() < roomy.runs[1].evaluation->makespan());
  const Evaluation &first = *roomy.runs.front().evaluation;
  CHECK(*first.ranked_bound() <= first.ranked_ticks());
  // Random per-device steps and caps that make recomputation bind: the pruned ranking's winner
  // is the exhaustive one by iteration.
  std::mt19937 random(29);
  std::uniform_int_distribution<std::int64_t> step(0, 12);
  for (int trial = 0; trial < 4; ++trial) {
    CAPTURE(trial);
    RunInput drawn = uniform_input(3, 6, {1, 1}, {1, 1}, {1, 1});
    drawn.iteration_end = trial % 2 == 0 ? IterationEnd::sync : IterationEnd::post_validation;
    drawn.optimizer_step.clear();
    for (int g = 0; g < 3; ++g)
      drawn.optimizer_step.push_back({step(random), 2});
    const double cap = trial < 2 ? 1.5 : 2.0;
    const RankRequest request = request_for(drawn, {"1f1b", "zb-h1", "zb-h2", "zb-v"}, {cap});
    const Ranking ranking = rank_runs(request).front();
    const std::optional<Rational> best = exhaustive_best(request, cap);
    const RankedRun *winner = ranking.winner();
    REQUIRE(best.has_value() == (winner != nullptr));
    if (winner != nullptr)
      CHECK(winner->evaluation->ranked_time() == *best);
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
  input.costs_files = {"model.csv"};
  CHECK(default_policies(input, true) ==
        std::vector<std::string>{"none", "full", "selective", "ilp"});
  input.remat_policy = "none,ilp";
  input.origins["remat.policy"] = {"s.toml", 3, "remat.policy"};
  CHECK(default_policies(input, true) == std::vector<std::string>{"none", "ilp"});
  CHECK(split_names("a,,b,") == std::vector<std::string>{"a", "b"});
}

TEST_CASE("a ranking over microbatch sizes keeps m x b and ranks each size as its own scenario") {
  // docs/compare.md, "Microbatch sizes": cost files at b = 1 and 4 of a 4-layer model; a larger
  // size costs less per sample (F = 1 ms at b = 1, 3 ms at b = 4), so fewer, larger
  // microbatches trade per-sample speed against the pipeline's fill.
  const auto write_file = [](const std::string &name, std::int64_t b, Rational forward) {
    CostFile file;
    file.metadata.b = b;
    for (int layer = 0; layer < 4; ++layer) {
      CostRow row;
      row.layer_id = layer;
      row.layer_name = fmt::format("block{}", layer);
      row.fwd_ms = forward;
      row.bwd_input_ms = forward;
      row.bwd_weight_ms = forward;
      row.bwd_total_ms = forward * Rational{2, 1};
      row.recompute_ms = forward;
      file.rows.push_back(row);
    }
    const std::string path = (std::filesystem::temp_directory_path() / name).string();
    std::ofstream(path) << write_cost_json(file);
    return path;
  };
  RunInput base;
  base.devices = 4;
  base.costs_files = {write_file("ppsim-rank-b1.json", 1, {1, 1}),
                      write_file("ppsim-rank-b4.json", 4, {3, 1})};
  base.microbatch_size = 2;
  base.microbatches = 8; // 16 samples
  RankRequest request = request_for(base, {"1f1b", "zb-h1"}, {std::nullopt});
  request.microbatch_sizes = {1, 2, 4};
  const std::vector<Ranking> rankings = rank_runs(request);
  REQUIRE(rankings.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    const int size = request.microbatch_sizes[k];
    CAPTURE(size);
    CHECK(rankings[k].microbatch_size == size);
    CHECK(rankings[k].microbatches == 16 / size);
    const RunInput sized = at_microbatch_size(base, size, {"", 0, "sizes"});
    CHECK(sized.microbatches * sized.microbatch_size == 16);
    for (const RankedRun &run : rankings[k].runs) {
      RunInput alone = sized;
      alone.schedule = run.schedule;
      alone.remat_policy = run.policy;
      CHECK(run.evaluation->makespan() == evaluate_run(alone).makespan());
    }
    CHECK(ranking_heading(base, rankings[k]) ==
          fmt::format("memory cap K = none, microbatch size {} (m = {})", size, 16 / size));
  }
  // The winner over the sizes: the first run of the pooled ranking, which holds every run.
  const std::vector<const RankedRun *> pooled = pooled_ranking(rankings);
  CHECK(pooled.size() == 6);
  REQUIRE(pooled.front()->fits());
  const RankedRun *fastest = pooled.front();
  for (const Ranking &ranking : rankings)
    CHECK_FALSE(ranking.winner()->evaluation->ranked_time() < fastest->evaluation->ranked_time());
  // What a ranking over sizes cannot rank is refused before any run.
  const auto refusal = [&](const RankRequest &refused) {
    try {
      check_microbatch_sizes(refused);
    } catch (const Error &error) {
      return std::string(error.what());
    }
    return std::string();
  };
  CHECK(refusal(request).empty());
  RankRequest twice = request;
  twice.microbatch_sizes = {1, 2, 1};
  CHECK(refusal(twice) == "field 'microbatch sizes': microbatch size 1 is given twice");
  twice.microbatch_sizes = {0};
  CHECK(refusal(twice) == "field 'microbatch sizes': expected microbatch sizes >= 1, got 0");
  RankRequest capped = request;
  capped.base.cap_activations = 4;
  CHECK(refusal(capped) ==
        "field 'microbatch sizes': ranking microbatch sizes needs the memory as a byte budget "
        "(cluster.memory): a cap K "
        "counts microbatches, each of b samples, so it is not one memory across sizes");
  capped = request;
  capped.caps = {2.0};
  CHECK(refusal(capped).starts_with("field 'microbatch sizes': ranking microbatch sizes needs"));
  RankRequest timed = request;
  timed.base.forward = {{1, 1}};
  timed.base.origins["model.F"] = {"s.toml", 4, "model.F"};
  CHECK(refusal(timed) == "s.toml:4: field 'model.F': is one microbatch's cost at one size: "
                          "ranking microbatch sizes reads every cost from the cost files at each "
                          "size");
  RankRequest outside = request;
  outside.microbatch_sizes = {2, 8};
  CHECK(refusal(outside).find("microbatch size 8 is outside the sizes the cost files were "
                              "profiled at (1, 4)") != std::string::npos);
  CHECK_THROWS_AS(rank_runs(outside), Error); // rank_runs checks first too
  CHECK(rankings_json(rankings).find("\"microbatch_size\": 4") != std::string::npos);
  // A size that does not divide the batch, and a base without a size of its own.
  CHECK_THROWS_WITH_AS(at_microbatch_size(base, 3, {"", 0, "sizes"}),
                       "field 'sizes': a batch of m x b = 8 x 2 = 16 samples "
                       "is not a whole number of microbatches of size 3",
                       Error);
  base.microbatch_size = 0;
  RunInput huge = base;
  huge.microbatches = 1'000'000'000;
  huge.microbatch_size = 1'000'000;
  CHECK_THROWS_WITH_AS(at_microbatch_size(huge, 1, {"", 0, "sizes"}),
                       "field 'sizes': microbatch size 1 gives m = "
                       "1000000000000000 microbatches for the batch of 1000000000000000 samples, "
                       "more than ppsim runs",
                       Error);
  base.costs_files = {request.base.costs_files[1]}; // one file: its recorded size, 4
  CHECK(at_microbatch_size(base, 1, {"", 0, "sizes"}).microbatches == 32);
  base.costs_files.clear();
  CHECK_THROWS_WITH_AS(at_microbatch_size(base, 2, {"", 0, "sizes"}),
                       "field 'pipeline.microbatch_size': ranking microbatch sizes keeps the "
                       "batch of m x b samples: give the run's size b and cost files at the sizes "
                       "ranked (model.costs_file)",
                       Error);
  for (const std::string &path : request.base.costs_files)
    std::filesystem::remove(path);
}
