// The partitioning DP (docs/partition.md) against brute force over all compositions, the memory
// limit of the in-flight counts, and recomputation-aware splits.
#include "base/index.h"
#include "remat/partition.h"
#include "costs/stage_sums.h"
#include "sim/placement.h"

#include "base/error.h"

#include <doctest/doctest.h>

#include <functional>
#include <random>

using namespace ppsim;

namespace {

// The least bottleneck over every split of `layers` into `stages` positive counts.
double brute_force(int layers, int stages, const StageTimeFn &stage_time) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> counts;
  const std::function<void(int, double)> recurse = [&](int first, double bottleneck) {
    const int stage = static_cast<int>(counts.size());
    if (stage == stages) {
      if (first == layers)
        best = std::min(best, bottleneck);
      return;
    }
    for (int n = 1; first + n <= layers; ++n) {
      const std::optional<double> time = stage_time(stage, first, n);
      if (!time)
        continue;
      counts.push_back(n);
      recurse(first + n, std::max(bottleneck, *time));
      counts.pop_back();
    }
  };
  recurse(0, 0);
  return best;
}

CostFile random_costs(std::mt19937 &rng, int layers) {
  std::uniform_int_distribution<int> ms(1, 9);
  std::uniform_real_distribution<double> bytes(1, 10);
  CostFile costs;
  for (int l = 0; l < layers; ++l) {
    CostRow row;
    row.layer_id = l;
    row.fwd_ms = {ms(rng), 1};
    row.bwd_input_ms = {ms(rng), 1};
    row.bwd_weight_ms = {ms(rng), 2};
    row.recompute_ms = {ms(rng), 1};
    row.recompute_selective_ms = {ms(rng), 4};
    row.stored_input_bytes = 1;
    row.activation_bytes_selective = 1 + bytes(rng);
    row.activation_bytes_full = row.activation_bytes_selective + bytes(rng);
    row.param_bytes = bytes(rng);
    row.output_bytes = 1e6;
    costs.rows.push_back(row);
  }
  return costs;
}

// A model a user brings: times in thousandths of a ms, states of a few hundred MB; with
// `embedding` the first layer takes no time and holds four times the parameters, with `head` the
// last one's forward is four times as long.
CostFile non_round_costs(std::mt19937 &rng, int layers, bool embedding, bool head) {
  std::uniform_int_distribution<int> thousandths(1, 9999);
  std::uniform_real_distribution<double> bytes(1e8, 9e8);
  const auto random_ms = [&] { return Rational{thousandths(rng), 1000}; };
  CostFile costs;
  for (int l = 0; l < layers; ++l) {
    CostRow row;
    row.layer_id = l;
    const bool no_time = embedding && l == 0;
    row.fwd_ms = no_time ? Rational{0, 1} : random_ms();
    row.bwd_input_ms = no_time ? Rational{0, 1} : random_ms();
    row.bwd_weight_ms = no_time ? Rational{0, 1} : random_ms();
    if (head && l == layers - 1)
      row.fwd_ms = row.fwd_ms * Rational{4, 1};
    row.param_bytes = bytes(rng) * (no_time ? 4 : 1);
    row.grad_bytes = row.param_bytes;
    row.optimizer_state_bytes = 6 * row.param_bytes;
    costs.rows.push_back(row);
  }
  return costs;
}

double stage_bytes(const CostFile &costs, int first, int count, int in_flight) {
  double total = 0;
  for (int l = first; l < first + count; ++l) {
    total += costs.rows[l].param_bytes + in_flight * costs.rows[l].activation_bytes_full;
  }
  return total;
}

} // namespace

TEST_CASE("DP equals brute force on random stage times, some stages not fitting") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const int layers = std::uniform_int_distribution<int>(1, 8)(rng);
    const int stages = std::uniform_int_distribution<int>(1, layers)(rng);
    std::vector<double> table(ppsim::at(stages * layers * (layers + 1)));
    for (double &value : table)
      value = std::uniform_int_distribution<int>(-3, 20)(rng);
    int calls = 0;
    const StageTimeFn stage_time = [&](int stage, int first, int count) -> std::optional<double> {
      ++calls;
      const double value = table[(stage * layers + first) * (layers + 1) + count];
      if (value < 0)
        return std::nullopt;
      return value;
    };
    const double expected = brute_force(layers, stages, stage_time);
    calls = 0;
    const std::optional<Partition> partition = partition_layers(layers, stages, stage_time);
    CHECK(calls <= stages * layers * layers + stages); // O(p L^2), plus the final report
    if (expected == std::numeric_limits<double>::infinity()) {
      CHECK_FALSE(partition);
      continue;
    }
    REQUIRE(partition);
    CHECK(partition->bottleneck_ms == expected);
    int first = 0;
    for (int k = 0; k < stages; ++k) {
      const int count = partition->layers_per_stage[k];
      REQUIRE(count >= 1);
      CHECK(partition->stage_ms[k] == *stage_time(k, first, count));
      CHECK(partition->stage_ms[k] <= expected);
      first += count;
    }
    CHECK(first == layers);
  }
}

TEST_CASE(
    "a lower bound changes the work, never the split: random times above a prefix-sum bound") {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 300; ++trial) {
    const int layers = std::uniform_int_distribution<int>(1, 12)(rng);
    const int stages = std::uniform_int_distribution<int>(1, layers)(rng);
    // Stage time = the layers' base times (what the bound sums) plus a random extra, on a small
    // integer grid so that ties are common; some stages do not fit, and so none containing them.
    std::vector<double> prefix{0};
    for (int l = 0; l < layers; ++l)
      prefix.push_back(prefix.back() + std::uniform_int_distribution<int>(0, 4)(rng));
    std::vector<double> extra(ppsim::at(stages * layers * (layers + 1)));
    for (double &value : extra)
      value = std::uniform_int_distribution<int>(0, 3)(rng);
    const int widest = std::uniform_int_distribution<int>(1, layers)(rng);
    const StageBoundFn bound = [&](int, int first, int count) -> std::optional<double> {
      if (count > widest)
        return std::nullopt;
      return prefix[first + count] - prefix[first];
    };
    const StageTimeFn stage_time = [&](int stage, int first, int count) -> std::optional<double> {
      const std::optional<double> base = bound(stage, first, count);
      if (!base)
        return std::nullopt;
      return *base + extra[(stage * layers + first) * (layers + 1) + count];
    };
    const std::optional<Partition> exhaustive = partition_layers(layers, stages, stage_time);
    const std::optional<Partition> bounded = partition_layers(layers, stages, stage_time, bound);
    REQUIRE(bounded.has_value() == exhaustive.has_value());
    if (!bounded)
      continue;
    CHECK(bounded->layers_per_stage == exhaustive->layers_per_stage);
    CHECK(bounded->bottleneck_ms == exhaustive->bottleneck_ms);
  }
}

TEST_CASE("monotone stage times: the binary-search DP gives the exhaustive split, ties included") {
  std::mt19937 rng(29);
  for (int trial = 0; trial < 2000; ++trial) {
    const int layers = std::uniform_int_distribution<int>(1, 16)(rng);
    const int stages = std::uniform_int_distribution<int>(1, layers)(rng);
    // Balanced stages: F + B + W and the bytes (resident + in-flight x held) as prefix sums of
    // small integers (zeros and ties common), in-flight counts non-increasing along the pipeline;
    // a stage whose bytes pass the budget does not fit.
    std::vector<double> time_prefix{0}, static_prefix{0}, held_prefix{0};
    for (int l = 0; l < layers; ++l) {
      time_prefix.push_back(time_prefix.back() + std::uniform_int_distribution<int>(0, 3)(rng));
      static_prefix.push_back(static_prefix.back() + std::uniform_int_distribution<int>(0, 2)(rng));
      held_prefix.push_back(held_prefix.back() + std::uniform_int_distribution<int>(0, 2)(rng));
    }
    std::vector<int> in_flight(ppsim::at(stages));
    for (int k = stages - 1, count = 1; k >= 0; --k)
      in_flight[ppsim::at(k)] = count += std::uniform_int_distribution<int>(0, 2)(rng);
    const double budget = std::uniform_int_distribution<int>(0, 40)(rng);
    const StageTimeFn stage_time = [&](int stage, int first, int count) -> std::optional<double> {
      const auto sum = [&](const std::vector<double> &prefix) {
        return prefix[ppsim::at(first + count)] - prefix[ppsim::at(first)];
      };
      if (sum(static_prefix) + in_flight[ppsim::at(stage)] * sum(held_prefix) > budget)
        return std::nullopt;
      return sum(time_prefix);
    };
    const std::optional<Partition> exhaustive = partition_layers(layers, stages, stage_time);
    const std::optional<Partition> searched = partition_layers_monotone(layers, stages, stage_time);
    REQUIRE(searched.has_value() == exhaustive.has_value());
    if (searched)
      CHECK(*searched == *exhaustive);
  }
}

TEST_CASE("balanced cost files: partition_costs equals the exhaustive DP") {
  std::mt19937 rng(31);
  for (int trial = 0; trial < 60; ++trial) {
    const int layers = std::uniform_int_distribution<int>(2, 30)(rng);
    const CostFile costs = random_costs(rng, layers);
    PartitionOptions options;
    options.stages = std::uniform_int_distribution<int>(1, std::min(layers, 6))(rng);
    options.schedule = trial % 2 ? "1f1b" : "zb-h1";
    options.budget_bytes = std::uniform_real_distribution<double>(20, 400)(rng);
    if (trial % 3 == 0) { // measured in-flight counts, in any order: the exhaustive DP then
      for (int k = 0; k < options.stages; ++k)
        options.in_flight.push_back(std::uniform_int_distribution<int>(1, 6)(rng));
    }
    const std::optional<Partition> exhaustive =
        partition_layers(layers, options.stages, stage_time_from_costs(costs, options));
    if (!exhaustive) {
      CHECK_THROWS_AS(partition_costs(costs, options), Error);
      continue;
    }
    CHECK(partition_costs(costs, options) == *exhaustive);
  }
}

TEST_CASE("cost files: the prefix-sum bound gives the exhaustive split in both modes") {
  std::mt19937 rng(23);
  for (int trial = 0; trial < 80; ++trial) {
    const int layers = std::uniform_int_distribution<int>(2, 24)(rng);
    const CostFile costs = random_costs(rng, layers);
    PartitionOptions options;
    options.stages = std::uniform_int_distribution<int>(1, std::min(layers, 4))(rng);
    options.schedule = trial % 2 ? "1f1b" : "zb-h1";
    options.budget_bytes = std::uniform_real_distribution<double>(20, 400)(rng);
    options.mode = trial % 3 ? PartitionMode::balanced : PartitionMode::remat_aware;
    options.windows = {.tp = 2, .tp_bandwidth_gb_per_s = 1};
    const StageTimeFn stage_time = stage_time_from_costs(costs, options);
    const std::optional<Partition> exhaustive =
        partition_layers(layers, options.stages, stage_time);
    const std::optional<Partition> bounded = partition_layers(
        layers, options.stages, stage_time, stage_bound_from_costs(costs, options));
    REQUIRE(bounded.has_value() == exhaustive.has_value());
    if (!bounded)
      continue;
    CHECK(bounded->layers_per_stage == exhaustive->layers_per_stage);
    CHECK(bounded->bottleneck_ms == exhaustive->bottleneck_ms);
  }
  // 400 layers in 8 balanced stages: the bound leaves a small share of the 8 x 400^2 / 2
  // intervals to evaluate.
  const CostFile costs = random_costs(rng, 400);
  PartitionOptions options;
  options.stages = 8;
  const StageTimeFn stage_time = stage_time_from_costs(costs, options);
  int calls = 0;
  const StageTimeFn counted = [&](int stage, int first, int count) {
    ++calls;
    return stage_time(stage, first, count);
  };
  const std::optional<Partition> partition =
      partition_layers(400, 8, counted, stage_bound_from_costs(costs, options));
  REQUIRE(partition);
  CHECK(calls < 8 * 400 * 4);
  CHECK(*partition == partition_costs(costs, options));
}

TEST_CASE("balanced: uniform layers split evenly") {
  const StageTimeFn stage_time = [](int, int, int count) -> std::optional<double> {
    return 3.0 * count;
  };
  const std::optional<Partition> partition = partition_layers(8, 4, stage_time);
  REQUIRE(partition);
  CHECK(partition->layers_per_stage == std::vector<int>{2, 2, 2, 2});
  CHECK(partition->bottleneck_ms == 6);
}

TEST_CASE(
    "issue_17 the DP reports each finished stage, so a long remat-aware split is never silent") {
  const StageTimeFn stage_time = [](int, int, int count) -> std::optional<double> {
    return 3.0 * count;
  };
  std::vector<std::pair<std::size_t, std::size_t>> reports;
  const auto progress = [&](std::size_t done, std::size_t stages, std::string_view) {
    reports.emplace_back(done, stages);
  };
  const std::optional<Partition> partition = partition_layers(8, 4, stage_time, {}, progress);
  REQUIRE(partition);
  CHECK(reports ==
        std::vector<std::pair<std::size_t, std::size_t>>{{0, 4}, {1, 4}, {2, 4}, {3, 4}, {4, 4}});
}

TEST_CASE("1f1b memory limit: early stages take fewer layers") {
  // 8 identical layers, 4 stages; activation 1 per layer and in-flight microbatch, no states.
  CostFile costs;
  for (int l = 0; l < 8; ++l) {
    CostRow row;
    row.layer_id = l;
    row.fwd_ms = {1, 1};
    row.bwd_input_ms = {1, 1};
    row.bwd_weight_ms = {1, 1};
    row.activation_bytes_full = 1;
    costs.rows.push_back(row);
  }
  PartitionOptions options;
  options.stages = 4;
  CHECK(partition_costs(costs, options).layers_per_stage == std::vector<int>{2, 2, 2, 2});
  // Stage k holds 4 - k microbatches: with 6 bytes, stages 0, 1, 2 fit at most 1, 2, 3 layers,
  // so the bottleneck is 3 layers; ties go to fewer layers in the last stage.
  options.budget_bytes = 6;
  const Partition limited = partition_costs(costs, options);
  CHECK(limited.layers_per_stage == std::vector<int>{1, 2, 3, 2});
  CHECK(limited.bottleneck_ms == 9);
  options.budget_bytes = 3;
  CHECK_THROWS_WITH_AS(partition_costs(costs, options),
                       "no split of 8 layers into 4 stages fits 3 bytes per device", Error);
  // Counts given explicitly (measured from a schedule) replace the formula: 6 microbatches on
  // every stage (GPipe, m = 6) under 6 bytes allow one layer per stage, too few for 8 layers;
  // one microbatch per stage allows the even split again.
  options.budget_bytes = 6;
  options.in_flight = {6, 6, 6, 6};
  CHECK(stage_in_flight(options, 2) == 6);
  CHECK_THROWS_AS(partition_costs(costs, options), Error);
  options.in_flight = {1, 1, 1, 1};
  CHECK(partition_costs(costs, options).layers_per_stage == std::vector<int>{2, 2, 2, 2});
}

TEST_CASE("balanced under a memory limit: DP equals brute force and respects the limit") {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 100; ++trial) {
    const int layers = std::uniform_int_distribution<int>(2, 7)(rng);
    const CostFile costs = random_costs(rng, layers);
    PartitionOptions options;
    options.stages = std::uniform_int_distribution<int>(1, std::min(layers, 4))(rng);
    options.schedule = trial % 2 ? "1f1b" : "zb-h2";
    options.budget_bytes = std::uniform_real_distribution<double>(10, 120)(rng);
    const StageTimeFn stage_time = stage_time_from_costs(costs, options);
    const double expected = brute_force(layers, options.stages, stage_time);
    const std::optional<Partition> partition = partition_layers(layers, options.stages, stage_time);
    REQUIRE(partition.has_value() == (expected != std::numeric_limits<double>::infinity()));
    if (!partition)
      continue;
    CHECK(partition->bottleneck_ms == expected);
    for (int k = 0, first = 0; k < options.stages; first += partition->layers_per_stage[k], ++k) {
      const int in_flight = in_flight_count(options.schedule, options.stages, k);
      CHECK(stage_bytes(costs, first, partition->layers_per_stage[k], in_flight) <=
            options.budget_bytes);
    }
  }
}

TEST_CASE("remat-aware: fits where balanced cannot, pays exposed recomputation, brute force") {
  std::mt19937 rng(13);
  int rescued = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int layers = std::uniform_int_distribution<int>(2, 6)(rng);
    const CostFile costs = random_costs(rng, layers);
    PartitionOptions options;
    options.stages = std::uniform_int_distribution<int>(1, std::min(layers, 3))(rng);
    options.budget_bytes = std::uniform_real_distribution<double>(10, 80)(rng);
    options.mode = PartitionMode::remat_aware;
    options.windows = {.tp = 2, .tp_bandwidth_gb_per_s = 1};
    const StageTimeFn aware = stage_time_from_costs(costs, options);
    options.mode = PartitionMode::balanced;
    const StageTimeFn balanced = stage_time_from_costs(costs, options);
    const std::optional<Partition> with_remat = partition_layers(layers, options.stages, aware);
    const std::optional<Partition> without = partition_layers(layers, options.stages, balanced);
    const double expected = brute_force(layers, options.stages, aware);
    CHECK(with_remat.has_value() == (expected != std::numeric_limits<double>::infinity()));
    if (with_remat)
      CHECK(with_remat->bottleneck_ms == expected);
    if (without) {
      // Every stage that fits without remat costs the same in both modes.
      REQUIRE(with_remat);
      CHECK(with_remat->bottleneck_ms <= without->bottleneck_ms);
    } else if (with_remat) {
      ++rescued;
    }
  }
  CHECK(rescued > 0);
}

TEST_CASE("cost split: brute force over every composition on non-round costs, embedding and head") {
  std::mt19937 rng(31);
  for (int trial = 0; trial < 200; ++trial) {
    const int layers = 2 + trial % 8;
    const CostFile costs = non_round_costs(rng, layers, trial % 2 == 0, trial % 3 == 0);
    const int stages = 1 + static_cast<int>(rng() % static_cast<unsigned>(layers));
    CAPTURE(layers);
    CAPTURE(stages);
    const auto time_of = [&](int first, int count) {
      Rational total{0, 1};
      for (int l = first; l < first + count; ++l)
        total = total + costs.rows[at(l)].fwd_ms + costs.rows[at(l)].bwd_input_ms +
                costs.rows[at(l)].bwd_weight_ms;
      return total;
    };
    const auto state_of = [&](int first, int count) {
      double total = 0;
      for (int l = first; l < first + count; ++l)
        total += costs.rows[at(l)].param_bytes + costs.rows[at(l)].grad_bytes +
                 costs.rows[at(l)].optimizer_state_bytes;
      return total;
    };
    // The lexicographic least (slowest stage, largest state) over every composition.
    std::optional<std::pair<Rational, double>> best;
    std::vector<int> counts;
    const std::function<void(int, Rational, double)> recurse = [&](int first, Rational slowest,
                                                                   double largest) {
      if (static_cast<int>(counts.size()) == stages) {
        if (first == layers && (!best || slowest < best->first ||
                                (slowest == best->first && largest < best->second)))
          best = std::pair{slowest, largest};
        return;
      }
      for (int n = 1; first + n <= layers; ++n) {
        const Rational time = time_of(first, n);
        counts.push_back(n);
        recurse(first + n, slowest < time ? time : slowest, std::max(largest, state_of(first, n)));
        counts.pop_back();
      }
    };
    recurse(0, Rational{0, 1}, 0);
    const Partition split = cost_balanced_split(costs, stages);
    REQUIRE(split.layers_per_stage.size() == at(stages));
    Rational slowest{0, 1};
    double largest = 0;
    for (int k = 0, first = 0; k < stages; first += split.layers_per_stage[at(k)], ++k) {
      const Rational time = time_of(first, split.layers_per_stage[at(k)]);
      CHECK(split.stage_ms[at(k)] == doctest::Approx(to_double(time)));
      slowest = slowest < time ? time : slowest;
      largest = std::max(largest, state_of(first, split.layers_per_stage[at(k)]));
    }
    CHECK(slowest == best->first);
    CHECK(largest == doctest::Approx(best->second));
    CHECK(split.bottleneck_ms == doctest::Approx(to_double(slowest)));
  }
  CHECK_THROWS_WITH_AS(cost_balanced_split(random_costs(rng, 3), 4),
                       "the cost file has 3 layers, fewer than the 4 stages", Error);
}

TEST_CASE("cost split on devices holding several stages (interleaved, V, DualPipe): the least "
          "slowest device, by brute force, never worse than the per-stage or even split") {
  std::mt19937 rng(37);
  for (int trial = 0; trial < 300; ++trial) {
    const int devices = 2 + trial % 3;
    const PlacementKind kind = trial % 3 == 0   ? PlacementKind::round_robin
                               : trial % 3 == 1 ? PlacementKind::v_shape
                                                : PlacementKind::dual_pipe;
    const int chunks = kind == PlacementKind::dual_pipe ? 1 : 2;
    const std::vector<int> placement = make_placement(kind, devices, chunks);
    const int pipes = kind == PlacementKind::dual_pipe ? 2 : 1;
    const int stages = static_cast<int>(placement.size()) / pipes;
    const int layers = stages + static_cast<int>(rng() % 6);
    const CostFile costs = non_round_costs(rng, layers, true, trial % 2 == 0);
    CAPTURE(trial);
    const auto slowest_device = [&](const std::vector<int> &counts) {
      std::vector<double> load(at(devices), 0);
      std::vector<int> first{0};
      for (int c : counts)
        first.push_back(first.back() + c);
      for (std::size_t g = 0; g < placement.size(); ++g) {
        const std::size_t k = g % at(stages);
        for (int l = first[k]; l < first[k + 1]; ++l)
          load[at(placement[g])] += to_double(costs.rows[at(l)].fwd_ms) +
                                    to_double(costs.rows[at(l)].bwd_input_ms) +
                                    to_double(costs.rows[at(l)].bwd_weight_ms);
      }
      return *std::max_element(load.begin(), load.end());
    };
    const Partition split = cost_balanced_split(costs, stages, placement);
    const double ours = slowest_device(split.layers_per_stage);
    CHECK(split.bottleneck_ms == doctest::Approx(ours));
    CHECK(ours <= slowest_device(even_layer_counts(at(layers), stages)) + 1e-9);
    CHECK(ours <= slowest_device(cost_balanced_split(costs, stages).layers_per_stage) + 1e-9);
    double best = std::numeric_limits<double>::infinity();
    std::vector<int> counts;
    const std::function<void(int)> recurse = [&](int left) {
      if (static_cast<int>(counts.size()) == stages) {
        if (left == 0)
          best = std::min(best, slowest_device(counts));
        return;
      }
      for (int n = 1; n <= left; ++n) {
        counts.push_back(n);
        recurse(left - n);
        counts.pop_back();
      }
    };
    recurse(layers);
    CHECK(ours == doctest::Approx(best));
  }
}

TEST_CASE("in-flight counts and errors") {
  CHECK(in_flight_count("1f1b", 4, 0) == 4);
  CHECK(in_flight_count("1f1b", 4, 3) == 1);
  CHECK(in_flight_count("zb-h1", 4, 3) == 4);
  CHECK(in_flight_count("zb-h2", 4, 3) == 7);
  CHECK(in_flight_count("v-half", 4, 0) == 3);
  CHECK_THROWS_WITH_AS(in_flight_count("zb-h22", 4, 0),
                       "unknown schedule 'zb-h22', did you mean 'zb-h2'?", Error);
  CHECK_THROWS_WITH_AS(
      in_flight_count("gpipe", 4, 0),
      "schedule 'gpipe' has no in-flight count formula (those with one: 1f1b, 1f1b-split, "
      "zb-h1, zb-h2, v-half)",
      Error);
  const StageTimeFn unit = [](int, int, int n) -> std::optional<double> { return n; };
  CHECK_THROWS_WITH_AS(partition_layers(2, 3, unit), "cannot split 2 layers into 3 stages", Error);
}
