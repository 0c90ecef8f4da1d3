// Reconstructed Lynx (docs/lynx.md, "The model"): hand-computed window costs, the two limits of the
// issue (zero windows = on demand, long windows = no overhead) and HEU between on demand and the
// MILP optimum on seeded random instances.
#include "base/index.h"
#include "remat/lynx.h"

#include "base/error.h"

#include <doctest/doctest.h>

#include <random>

using namespace ppsim;

namespace {

const solver::Options kSolve{.time_limit_seconds = 30};

// One layer, B = [seg 0][tp window][seg 1][tp window]; tensor "a" (4 ms, read by seg 1) and "b"
// (2 ms, read by seg 0), 10 bytes each, two microbatches in flight.
OverlapProblem two_tensor_stage(double pipeline_ms, double tp_ms, double budget) {
  LayerProfile layer;
  layer.backward_segments = 2;
  layer.backward_window_ms = {tp_ms, tp_ms};
  layer.tensors = {{"a", 0, 4, 10, -1, 0, 1}, {"b", 0, 2, 10, -1, 0, 0}};
  return build_stage_problem({layer}, pipeline_ms, 2, 0, budget);
}

OverlapProblem random_problem(std::mt19937 &rng, double window_scale) {
  std::uniform_int_distribution<int> small(1, 3), coin(0, 1);
  std::uniform_real_distribution<double> unit(0.5, 4);
  LayerProfile layer;
  layer.backward_segments = small(rng);
  for (int k = 0; k < layer.backward_segments; ++k)
    layer.backward_window_ms.push_back(window_scale * unit(rng));
  layer.forward_window_ms = {window_scale * unit(rng)};
  layer.kept_bytes = unit(rng);
  const int tensors = small(rng);
  for (int o = 0; o < tensors; ++o) {
    const int producer = o > 0 && coin(rng) ? o - 1 : -1;
    std::uniform_int_distribution<int> segment(0, layer.backward_segments - 1);
    layer.tensors.push_back({"t", 0, unit(rng), unit(rng), producer, 0, segment(rng)});
  }
  const std::vector<LayerProfile> layers(ppsim::at(small(rng)), layer);
  OverlapProblem problem = build_stage_problem(layers, window_scale * unit(rng), small(rng), 1, 0);
  // A budget between "recompute everything on demand" and "keep everything".
  OverlapPlan all;
  all.placement.assign(problem.tensors.size(), Placement::on_demand);
  all.window.assign(problem.tensors.size(), -1);
  problem.budget_bytes = 1e18;
  const double low = evaluate(problem, all).peak_bytes;
  all.placement.assign(problem.tensors.size(), Placement::keep);
  const double high = evaluate(problem, all).peak_bytes;
  problem.budget_bytes =
      low + std::uniform_real_distribution<double>(0, 1)(rng) * std::max(0.0, high - low);
  return problem;
}

} // namespace

TEST_CASE("hand-computed: on demand 6 ms, HEU 3 ms, MILP 2 ms") {
  // Budget 20 with 2 in flight forces dropping both (keeping "a" costs 2 * 10 + 10 live).
  const OverlapProblem problem = two_tensor_stage(3, 2, 20);
  const std::optional<OverlapPlan> heuristic = lynx_heuristic(problem);
  REQUIRE(heuristic);
  CHECK(heuristic->placement[0] == Placement::window);
  CHECK(problem.windows[heuristic->window[0]].name == "pipeline"); // overflow 1 < 2 in tp0
  CHECK(heuristic->placement[1] == Placement::on_demand); // pipeline overflow 2 = on demand
  const OverlapCost cost = evaluate(problem, *heuristic);
  CHECK(cost.feasible);
  CHECK(cost.exposed_ms == 3);
  CHECK(cost.recompute_ms == 6);
  CHECK(cost.peak_bytes == 20);
  CHECK(evaluate(problem, on_demand(*heuristic)).exposed_ms == 6);
  // Optimum: "a" in the tp window after seg 0 (overflow 2), "b" in the pipeline window (fits).
  const std::optional<OverlapPlan> optimal = lynx_milp(problem, kSolve);
  REQUIRE(optimal);
  CHECK(evaluate(problem, *optimal).exposed_ms == doctest::Approx(2));
  CHECK(problem.windows[optimal->window[0]].name == "0.bwd_tp0");
  CHECK(problem.windows[optimal->window[1]].name == "pipeline");
  CHECK(evaluate(problem, keep_all(problem)).peak_bytes == 40);
}

TEST_CASE("HEU takes the latest window with spare capacity") {
  const OverlapProblem problem = two_tensor_stage(10, 10, 20);
  const std::optional<OverlapPlan> plan = lynx_heuristic(problem);
  REQUIRE(plan);
  CHECK(problem.windows[plan->window[0]].name == "0.bwd_tp0"); // not the earlier pipeline window
  CHECK(problem.windows[plan->window[1]].name == "pipeline");  // the only one before segment 0
  CHECK(evaluate(problem, *plan).exposed_ms == 0);
  CHECK(evaluate(problem, *plan).peak_bytes == 10);
}

TEST_CASE("early recomputation is resident until its consumer") {
  LayerProfile layer;
  layer.backward_window_ms = {0};
  layer.tensors = {{"x", 0, 1, 10, -1, 0, 0}};
  const OverlapProblem problem = build_stage_problem({layer, layer}, 5, 1, 0, 100);
  REQUIRE(problem.segments == 2);
  // B runs layer 1 (segment 0) then layer 0 (segment 1).
  CHECK(problem.tensors[0].demand_segment == 1);
  OverlapPlan plan{{Placement::on_demand, Placement::on_demand}, {-1, -1}};
  CHECK(evaluate(problem, plan).peak_bytes == 10);
  plan.placement[0] = Placement::window;
  plan.window[0] = 0; // pipeline window, before segment 0: live over segments 0 and 1
  const OverlapCost cost = evaluate(problem, plan);
  CHECK(cost.peak_bytes == 20);
  CHECK(cost.exposed_ms == 1);
  OverlapProblem tight = problem;
  tight.budget_bytes = 19;
  CHECK_FALSE(evaluate(tight, plan).feasible);
  // HEU under the tight budget keeps layer 0's tensor on demand instead.
  const std::optional<OverlapPlan> heuristic = lynx_heuristic(tight);
  REQUIRE(heuristic);
  CHECK(evaluate(tight, *heuristic).feasible);
  CHECK(evaluate(tight, *heuristic).exposed_ms == 1);
}

TEST_CASE("a window cannot host a tensor recomputed from a later one") {
  LayerProfile layer;
  layer.backward_segments = 2;
  layer.backward_window_ms = {10, 0};
  layer.tensors = {{"p", 0, 1, 10, -1, 0, 1}, {"c", 0, 1, 10, 0, 0, 0}};
  const OverlapProblem problem = build_stage_problem({layer}, 0, 1, 0, 100);
  OverlapPlan plan{{Placement::window, Placement::on_demand}, {1, -1}}; // p after segment 0
  CHECK_FALSE(evaluate(problem, plan).feasible);                        // c needs p at segment 0
  plan.placement[0] = Placement::keep;
  plan.window[0] = -1;
  CHECK(evaluate(problem, plan).feasible);
}

TEST_CASE("zero-length windows: HEU equals on demand") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const OverlapProblem problem = random_problem(rng, 0);
    const std::optional<OverlapPlan> plan = lynx_heuristic(problem);
    REQUIRE(plan);
    CHECK(evaluate(problem, *plan).exposed_ms == evaluate(problem, on_demand(*plan)).exposed_ms);
  }
}

TEST_CASE("windows longer than all recomputation: zero overhead") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    OverlapProblem problem = random_problem(rng, 1);
    double total_ms = 0;
    for (const OverlapTensor &tensor : problem.tensors)
      total_ms += tensor.recompute_ms;
    for (OverlapWindow &window : problem.windows)
      window.length_ms = total_ms + 1;
    // Room for the extra residency of recomputing in the pipeline window.
    problem.budget_bytes += 1e6;
    const std::optional<OverlapPlan> plan = lynx_heuristic(problem);
    REQUIRE(plan);
    const OverlapCost cost = evaluate(problem, *plan);
    CHECK(cost.feasible);
    CHECK(cost.exposed_ms == 0);
    CHECK(evaluate(problem, lynx_milp(problem, kSolve).value()).exposed_ms == doctest::Approx(0));
  }
}

TEST_CASE("random: MILP <= HEU <= on demand, all feasible") {
  std::mt19937 rng(3);
  int heu_better = 0, opt_better = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const OverlapProblem problem = random_problem(rng, 0.5);
    const std::optional<OverlapPlan> heuristic = lynx_heuristic(problem);
    REQUIRE(heuristic);
    const OverlapCost heu = evaluate(problem, *heuristic);
    const OverlapCost demand = evaluate(problem, on_demand(*heuristic));
    const OverlapCost opt = evaluate(problem, lynx_milp(problem, kSolve).value());
    CHECK(heu.feasible);
    CHECK(demand.feasible);
    CHECK(opt.feasible);
    CHECK(heu.exposed_ms <= demand.exposed_ms);
    CHECK(opt.exposed_ms <= heu.exposed_ms + 1e-6);
    heu_better += heu.exposed_ms < demand.exposed_ms;
    opt_better += opt.exposed_ms < heu.exposed_ms - 1e-6;
  }
  CHECK(heu_better > 0);
  CHECK(opt_better > 0);
}

TEST_CASE("budget below recomputing everything") {
  // On demand both tensors are live at segment 0 (20 bytes); HEU chooses its drop set on that
  // basis, while the MILP can recompute "a" after segment 0 and fit 10 bytes.
  const OverlapProblem problem = two_tensor_stage(3, 2, 19);
  CHECK_FALSE(lynx_heuristic(problem));
  const OverlapCost cost = evaluate(problem, lynx_milp(problem, kSolve).value());
  CHECK(cost.feasible);
  CHECK(cost.peak_bytes == 10);
  // Below one live tensor nothing fits.
  const OverlapProblem impossible = two_tensor_stage(3, 2, 9);
  CHECK_FALSE(lynx_heuristic(impossible));
  CHECK_FALSE(lynx_milp(impossible, kSolve));
}

TEST_CASE("analytic windows and the GPT-block layer profile") {
  WindowModel windows{.tp = 4, .tp_bandwidth_gb_per_s = 100};
  // 2 * 3/4 * 4e8 bytes / 1e8 bytes per ms = 6 ms.
  CHECK(all_reduce_ms(4e8, windows) == doctest::Approx(6));
  CHECK(all_reduce_ms(4e8, {.tp = 1}) == 0);
  CostRow row;
  row.output_bytes = 4e8;
  row.recompute_ms = {5, 1};
  row.recompute_selective_ms = {3, 2};
  row.activation_bytes_full = 100;
  row.activation_bytes_selective = 40;
  row.stored_input_bytes = 10;
  const LayerProfile layer = layer_profile(row, windows);
  CHECK(layer.kept_bytes == 10);
  REQUIRE(layer.backward_window_ms.size() == 2);
  CHECK(layer.backward_window_ms[1] == doctest::Approx(6));
  CHECK(layer.forward_window_ms[0] == doctest::Approx(6));
  REQUIRE(layer.tensors.size() == 2);
  CHECK(layer.tensors[0].bytes == 60);
  CHECK(layer.tensors[0].recompute_ms == 1.5);
  CHECK(layer.tensors[0].consumer_segment == 1);
  CHECK(layer.tensors[1].bytes == 30);
  CHECK(layer.tensors[1].recompute_ms == 3.5);
  CHECK(layer.tensors[1].consumer_segment == 0);
}

TEST_CASE("build_stage_problem errors") {
  LayerProfile layer;
  layer.backward_segments = 2;
  layer.backward_window_ms = {1};
  CHECK_THROWS_WITH_AS(build_stage_problem({layer}, 0, 1, 0, 1),
                       "'backward_window_ms' needs one entry per backward segment", Error);
}
