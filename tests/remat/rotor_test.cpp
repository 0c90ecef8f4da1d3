// The rotor dynamic program (docs/remat.md, "rotor"): exact oracles (docs/oracles.md, "rotor"), a
// brute-force recursion on random chains, reconstruction, replay and the multi-option variant.
#include "base/error.h"
#include "base/index.h"
#include "remat/rotor.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

using namespace ppsim::rotor;

namespace {

// Homogeneous chain of docs/oracles.md, "rotor": ftime 1, btime 2 (loss 0), x 1, xbar 2, no
// transients.
Chain homogeneous(int n) {
  ChainArrays a;
  a.ftime.assign(ppsim::at(n), 1);
  a.btime.assign(ppsim::at(n), 2);
  a.btime.push_back(0);
  a.x.assign(ppsim::at(n) + 1, 1);
  a.xbar.assign(ppsim::at(n) + 1, 2);
  a.xbar[0] = 1;
  a.ftmp.assign(ppsim::at(n), 0);
  a.btmp.assign(ppsim::at(n) + 1, 0);
  return single_option_chain(a);
}

// The recurrence of docs/remat.md, "Recurrence" evaluated top-down with no table: an independent
// check of the bottom-up order, the indexing and the tie rule's value.
double brute(const Chain &c, std::int64_t mm, int i, int j) {
  if (mm < 0)
    return kInfeasible;
  const auto x = [&](int l) { return c.activation[ppsim::at(l)]; };
  const Layer &layer = c.layers[ppsim::at(i)];
  if (i < j) {
    std::int64_t mmin = x(j + 1) + x(i + 1) + layer.nograd_forward_peak;
    for (int k = i + 1; k < j; ++k) {
      mmin =
          std::max(mmin, x(j + 1) + x(k) + x(k + 1) + c.layers[ppsim::at(k)].nograd_forward_peak);
    }
    if (mm < mmin)
      return kInfeasible;
  }
  double best = kInfeasible;
  for (const RecordOption &o : layer.options) {
    if (mm < o.required)
      continue;
    best = std::min(best, o.forward_time + o.backward_time +
                              (i == j ? 0.0 : brute(c, mm - o.stored, i + 1, j)));
  }
  for (int k = i + 1; k <= j; ++k) {
    double forwards = 0;
    for (int l = i; l < k; ++l)
      forwards += c.layers[ppsim::at(l)].nograd_forward_time;
    best = std::min(best, forwards + brute(c, mm - x(k), k, j) + brute(c, mm, i, k - 1));
  }
  return best;
}

Chain random_chain(std::mt19937 &rng, int n, int options) {
  std::uniform_int_distribution<int> time(1, 5), size(0, 3), big(1, 4);
  std::vector<MultiLayerArrays> layers(ppsim::at(n));
  std::vector<std::int64_t> cw;
  for (int l = 0; l <= n; ++l)
    cw.push_back(big(rng));
  for (MultiLayerArrays &layer : layers) {
    layer.nograd_forward_time = time(rng);
    layer.nograd_forward_peak = size(rng);
    for (int q = 0; q < options; ++q) {
      layer.options.push_back({layer.nograd_forward_time + q, static_cast<double>(time(rng)),
                               big(rng) + 2 * (options - q), size(rng), size(rng)});
    }
  }
  return multi_option_chain(layers, cw, time(rng));
}

Chain random_single_chain(std::mt19937 &rng, int n) {
  std::uniform_int_distribution<int> time(1, 5), size(0, 2), big(1, 3);
  ChainArrays a;
  for (int l = 0; l < n; ++l) {
    a.ftime.push_back(time(rng));
    a.ftmp.push_back(size(rng));
  }
  for (int l = 0; l <= n; ++l) {
    a.btime.push_back(l < n ? time(rng) : 1);
    a.x.push_back(big(rng));
    a.btmp.push_back(size(rng));
  }
  for (int l = 0; l <= n; ++l)
    a.xbar.push_back(a.x[ppsim::at(l)] + big(rng));
  return single_option_chain(a);
}

// Structure of a persistent sequence: before the loss, forwards only, each layer once; every
// B(l) follows a recording forward of l since the previous B(l); backwards in order n-1..0.
void check_structure(const Chain &c, const std::vector<Op> &ops) {
  const int n = c.length();
  const auto loss =
      std::find_if(ops.begin(), ops.end(), [](const Op &o) { return o.kind == OpKind::loss; });
  REQUIRE(loss != ops.end());
  std::vector<int> forwards(ppsim::at(n), 0);
  for (auto it = ops.begin(); it != loss; ++it) {
    CHECK(it->kind != OpKind::backward);
    ++forwards[ppsim::at(it->layer)];
  }
  CHECK(std::all_of(forwards.begin(), forwards.end(), [](int f) { return f == 1; }));
  int next_backward = n - 1;
  std::vector<char> recorded(ppsim::at(n), 0);
  for (const Op &op : ops) {
    if (op.kind == OpKind::forward_record)
      recorded[ppsim::at(op.layer)] = 1;
    if (op.kind == OpKind::backward) {
      CHECK(op.layer == next_backward--);
      CHECK(recorded[ppsim::at(op.layer)]);
    }
  }
  CHECK(next_backward == -1);
}

} // namespace

TEST_CASE("rotor oracles, homogeneous chains (docs/oracles.md, 'rotor')") {
  // Value C(M - x[0], 0, n) per budget M, ties leaf-first; M large enough = 3n, no recomputation.
  const Chain four = homogeneous(4);
  const Table t4(four, 10);
  const std::vector<std::pair<int, double>> n4{{5, 18}, {6, 15}, {7, 14},
                                               {8, 14}, {9, 13}, {10, 12}};
  for (int budget = 0; budget <= 4; ++budget)
    CHECK(t4.time(budget) == kInfeasible);
  for (const auto &[budget, value] : n4) {
    CAPTURE(budget);
    CHECK(t4.time(budget) == value);
  }
  const Chain eight = homogeneous(8);
  const Table t8(eight, 18);
  const std::vector<std::pair<int, double>> n8{{5, 52},  {6, 37},  {7, 33},  {8, 31},
                                               {9, 30},  {10, 29}, {11, 28}, {13, 27},
                                               {15, 26}, {17, 25}, {18, 24}};
  for (const auto &[budget, value] : n8) {
    CAPTURE(budget);
    CHECK(t8.time(budget) == value);
  }
  // No recomputation at the top budget: every layer recorded once, no no-grad forward.
  const std::vector<Op> ops = t8.sequence(18);
  CHECK(std::count_if(ops.begin(), ops.end(),
                      [](const Op &o) { return o.kind == OpKind::forward_record; }) == 8);
  CHECK(std::none_of(ops.begin(), ops.end(),
                     [](const Op &o) { return o.kind == OpKind::forward_nograd; }));
}

TEST_CASE("rotor reconstruction replays to the optimal time within the budget") {
  for (const int n : {4, 8}) {
    const Chain c = homogeneous(n);
    const Table table(c, 3 * n);
    for (std::int64_t budget = 0; budget <= 3 * n; ++budget) {
      CAPTURE(n);
      CAPTURE(budget);
      const double t = table.time(budget);
      const std::vector<Op> ops = table.sequence(budget);
      if (t == kInfeasible) {
        CHECK(ops.empty());
        continue;
      }
      check_structure(c, ops);
      const Replay r = replay(c, ops);
      CHECK(r.time == t);
      CHECK(r.peak <= budget);
      CHECK(r.forward_time == n); // ops before the loss: each forward once (docs/remat.md, "rotor")
    }
  }
}

TEST_CASE("rotor DP equals the brute-force recursion on random chains of <= 6 layers") {
  std::mt19937 rng(20261122);
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 1 + trial % 6;
    const int options = trial % 3 == 2 ? 2 : 1;
    const Chain c = trial % 2 == 0 ? random_single_chain(rng, n) : random_chain(rng, n, options);
    const std::int64_t top = 12 * (n + 1);
    const Table table(c, top);
    for (std::int64_t budget = 0; budget <= top; budget += 1 + trial % 3) {
      CAPTURE(trial);
      CAPTURE(budget);
      const double expected = brute(c, budget - c.activation[0], 0, n);
      CHECK(table.time(budget) == expected);
      if (expected != kInfeasible) {
        const std::vector<Op> ops = table.sequence(budget);
        check_structure(c, ops);
        CHECK(replay(c, ops).time == expected);
        // The live-tensor replay follows the single-option accounting of 5.2; the multi-option
        // sizes (cbw) follow Rockmate's conventions, which this replay does not model.
        if (trial % 2 == 0)
          CHECK(replay(c, ops).peak <= budget);
      }
    }
  }
}

TEST_CASE("multi-option variant picks the cheaper record when memory allows") {
  // One layer, two records: fast and big (q = 0), slow and small (q = 1).
  const std::vector<MultiLayerArrays> layers{{1, 0, {{1, 2, 6, 0, 0}, {3, 2, 2, 0, 0}}}};
  const Chain c = multi_option_chain(layers, {1, 1}, 0);
  const Table table(c, 10);
  CHECK(table.time(8) == 3); // cw[1] + 6 = 7 <= 8 - 1: the big record fits
  CHECK(table.sequence(8).front() == Op{OpKind::forward_record, 0, 0});
  CHECK(table.time(5) == 5); // only the small one fits
  CHECK(table.sequence(5).front() == Op{OpKind::forward_record, 0, 1});
  CHECK(table.time(3) == kInfeasible);
}

TEST_CASE("discretisation rounds sizes up and stage options form a time/memory front") {
  Chain bytes = homogeneous(4);
  for (std::int64_t &x : bytes.activation)
    x *= 1000;
  for (Layer &l : bytes.layers) {
    for (RecordOption &o : l.options) {
      o.stored *= 1000;
      o.required *= 1000;
    }
  }
  const Chain slots = discretize(bytes, 10000, 7); // unit 10000/7: 1000 -> 1, 2000 -> 2
  CHECK(slots.activation == homogeneous(4).activation);
  CHECK(slots.layers[1].options[0].stored == 2);
  const std::vector<StageOption> front = stage_options(homogeneous(4), 10);
  REQUIRE(front.size() == 5); // budgets 5, 6, 7, 9, 10 (oracle values 18, 15, 14, 13, 12)
  CHECK(front.front().budget == 5);
  CHECK(front.back().backward_time + front.back().forward_time == 12);
  for (std::size_t k = 1; k < front.size(); ++k) {
    CHECK(front[k].forward_time + front[k].backward_time <
          front[k - 1].forward_time + front[k - 1].backward_time);
    CHECK(front[k].peak <= front[k].budget);
  }
}

TEST_CASE("issue_32 a table past 2^26 entries is refused before it is allocated") {
  // 400 layers at 500 memory slots: 500 x 401^2 = 80 million entries, about 1 GB.
  const Chain long_chain = homogeneous(400);
  CHECK_THROWS_WITH_AS(Table(long_chain, 500),
                       "the checkpointing table of 400 layers at 500 memory slots would hold more "
                       "than 2^26 entries: split the layers into more stages (or give `ppsim "
                       "checkpoint` fewer --slots)",
                       ppsim::Error);
}
