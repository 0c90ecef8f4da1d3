// The CBC backend on tiny MILPs with known optima, infeasible and unbounded models, and a hard
// instance that must stop at the time limit.
#include "solver/milp.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace solver = ppsim::solver;
using solver::Sense;
using solver::Status;
using solver::VariableKind;

TEST_CASE("0-1 knapsack reaches its known optimum") {
  // Values 10, 13, 7, 8, weights 5, 6, 3, 4, capacity 10: best is items {0, 3} (18) or
  // {1, 3} (21) or {1, 2} (20) -> 21 with weight 10.
  solver::Model model;
  model.objective_sense = solver::ObjectiveSense::maximize;
  const std::vector<double> values{10, 13, 7, 8}, weights{5, 6, 3, 4};
  std::vector<solver::Term> capacity;
  for (int i = 0; i < 4; ++i)
    capacity.push_back({model.add_binary("take_" + std::to_string(i), values[i]), weights[i]});
  model.add_constraint("capacity", capacity, Sense::less_equal, 10);
  const solver::MilpSolution result = solver::solve(model, {});
  REQUIRE(result.status == Status::optimal);
  CHECK(result.objective == 21);
  CHECK(result.best_bound == doctest::Approx(21));
  CHECK(result.values == std::vector<double>{0, 1, 0, 1});
}

TEST_CASE("3x3 assignment finds the minimum-cost permutation") {
  // Costs: row i, column j. The optimum 1 + 2 + 3 = 6 uses (0,1), (1,0), (2,2); the diagonal
  // costs 4 + 5 + 3 = 12.
  const double cost[3][3] = {{4, 1, 9}, {2, 5, 8}, {7, 6, 3}};
  solver::Model model;
  int x[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      x[i][j] = model.add_binary("x_" + std::to_string(i) + "_" + std::to_string(j), cost[i][j]);
  for (int i = 0; i < 3; ++i) {
    model.add_constraint("row_" + std::to_string(i), {{x[i][0], 1}, {x[i][1], 1}, {x[i][2], 1}},
                         Sense::equal, 1);
    model.add_constraint("col_" + std::to_string(i), {{x[0][i], 1}, {x[1][i], 1}, {x[2][i], 1}},
                         Sense::equal, 1);
  }
  const solver::MilpSolution result = solver::solve(model, {});
  REQUIRE(result.status == Status::optimal);
  CHECK(result.objective == 6);
  CHECK(result.values[x[0][1]] == 1);
  CHECK(result.values[x[1][0]] == 1);
  CHECK(result.values[x[2][2]] == 1);
}

TEST_CASE("general integers, continuous variables, >= rows and repeated terms") {
  // min 3a + 2b + t  s.t.  a + a + b >= 7 (a written twice), t >= 2.5 - b, a, b integer in
  // [0, 10], t continuous >= 0. With b = 7 - 2a: cost 3a + 14 - 4a + max(0, 2.5 - 7 + 2a)
  // = 14 - a + max(0, 2a - 4.5): a = 2 gives 12, a = 3 gives 12.5, so a = 2, b = 3, t = 0.
  solver::Model model;
  const int a = model.add_variable("a", 0, 10, VariableKind::integer, 3);
  const int b = model.add_variable("b", 0, 10, VariableKind::integer, 2);
  const int t = model.add_variable("t", 0, solver::infinity, VariableKind::continuous, 1);
  model.add_constraint("demand", {{a, 1}, {a, 1}, {b, 1}}, Sense::greater_equal, 7);
  model.add_constraint("slack", {{t, 1}, {b, 1}}, Sense::greater_equal, 2.5);
  const solver::MilpSolution result = solver::solve(model, {});
  REQUIRE(result.status == Status::optimal);
  CHECK(result.objective == 12);
  CHECK(result.values[a] == 2);
  CHECK(result.values[b] == 3);
  CHECK(result.values[t] == doctest::Approx(0));
}

TEST_CASE("an infeasible model is reported as infeasible") {
  // x + y = 1 with binaries and x + y >= 2: no solution. Also an integrality-only conflict:
  // 2z = 1 for integer z.
  solver::Model model;
  const int x = model.add_binary("x");
  const int y = model.add_binary("y");
  model.add_constraint("one", {{x, 1}, {y, 1}}, Sense::equal, 1);
  model.add_constraint("two", {{x, 1}, {y, 1}}, Sense::greater_equal, 2);
  CHECK(solver::solve(model, {}).status == Status::infeasible);

  solver::Model parity;
  const int z = parity.add_variable("z", 0, 5, VariableKind::integer, 1);
  parity.add_constraint("half", {{z, 2}}, Sense::equal, 1);
  const solver::MilpSolution result = solver::solve(parity, {});
  CHECK(result.status == Status::infeasible);
  CHECK_FALSE(result.has_solution());
  CHECK(result.values.empty());
}

TEST_CASE("an unbounded model is reported as unbounded") {
  solver::Model model;
  const int x = model.add_variable("x", 0, solver::infinity, VariableKind::continuous, -1);
  model.add_constraint("floor", {{x, 1}}, Sense::greater_equal, 1);
  CHECK(solver::solve(model, {}).status == Status::unbounded);
}

namespace {

// Market split (Cornuejols and Dawande 1999): 6 equality rows over 50 binaries with random
// coefficients in [0, 99] and right-hand side half the row sum; slack variables make every 0-1
// point feasible, and minimizing the total slack is notoriously hard for branch and bound.
solver::Model market_split() {
  std::mt19937 random(20261122);
  std::uniform_int_distribution<int> coefficient(0, 99);
  solver::Model model;
  const int rows = 6, columns = 50;
  for (int j = 0; j < columns; ++j)
    model.add_binary("x_" + std::to_string(j));
  for (int i = 0; i < rows; ++i) {
    std::vector<solver::Term> terms;
    double sum = 0;
    for (int j = 0; j < columns; ++j) {
      const int value = coefficient(random);
      terms.push_back({j, static_cast<double>(value)});
      sum += value;
    }
    const int above = model.add_variable("above_" + std::to_string(i), 0, solver::infinity,
                                         VariableKind::continuous, 1);
    const int below = model.add_variable("below_" + std::to_string(i), 0, solver::infinity,
                                         VariableKind::continuous, 1);
    terms.push_back({above, -1});
    terms.push_back({below, 1});
    model.add_constraint("split_" + std::to_string(i), terms, Sense::equal, std::floor(sum / 2));
  }
  return model;
}

} // namespace

TEST_CASE("the time limit is honoured on a hard market-split instance") {
  const solver::MilpSolution result = solver::solve(market_split(), {.time_limit_seconds = 1.0});
  CHECK(result.seconds < 5.0); // 1 s plus model setup on a loaded machine
  CHECK(result.status != Status::optimal);
  CHECK(result.status != Status::infeasible);
  CHECK(result.limit == solver::Limit::time);
  if (result.has_solution())
    CHECK(result.best_bound <= result.objective);
}

TEST_CASE("a node limit stops the search at the same point on every run, and says so") {
  const solver::Model model = market_split();
  const solver::Options options{.time_limit_seconds = 600, .node_limit = 20};
  const solver::MilpSolution first = solver::solve(model, options);
  const solver::MilpSolution second = solver::solve(model, options);
  CHECK(first.limit == solver::Limit::nodes);
  CHECK(std::string(solver::limit_name(first.limit)) == "node limit");
  CHECK(first.status != Status::optimal);
  CHECK(first.seconds < 60);
  CHECK(second.status == first.status);
  CHECK(second.objective == first.objective);
  CHECK(second.best_bound == first.best_bound);
  CHECK(second.values == first.values);
  // Finished searches were stopped by nothing.
  CHECK(solver::solve(model, {.time_limit_seconds = 600, .relative_gap = 1e9}).limit ==
        solver::Limit::none);
}

TEST_CASE("a relative gap stops early with a solution within the gap") {
  solver::Model model;
  model.objective_sense = solver::ObjectiveSense::maximize;
  std::vector<solver::Term> capacity;
  for (int i = 0; i < 30; ++i)
    capacity.push_back({model.add_binary("item_" + std::to_string(i), 10 + (i * 7) % 13),
                        static_cast<double>(5 + (i * 11) % 17)});
  model.add_constraint("capacity", capacity, Sense::less_equal, 100);
  const solver::MilpSolution exact = solver::solve(model, {});
  const solver::MilpSolution gapped = solver::solve(model, {.relative_gap = 0.2});
  REQUIRE(exact.status == Status::optimal);
  REQUIRE(gapped.has_solution());
  CHECK(gapped.objective >= 0.8 * exact.objective);
  CHECK(gapped.objective <= exact.objective);
}

TEST_CASE("malformed models are rejected before solving") {
  solver::Model model;
  model.add_variable("x", 2, 1, VariableKind::continuous);
  CHECK_THROWS_WITH(solver::solve(model, {}), "variable 'x' has lower bound above its upper bound");
}
