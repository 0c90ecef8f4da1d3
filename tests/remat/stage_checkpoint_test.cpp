// Checkpointing inside a stage from per-layer costs (rotor DP with full and selective records):
// the front's shape, its levels respected in bytes, and exact times at both ends.
#include "remat/stage_checkpoint.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

using namespace ppsim;

namespace {

// Layers with non-round times and sizes, seeded; `selective` adds the attention-core columns.
std::vector<CostRow> random_layers(int count, unsigned seed, bool selective) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> micro(500, 3000), kib(64, 1024);
  std::vector<CostRow> rows;
  for (int l = 0; l < count; ++l) {
    CostRow row;
    row.layer_id = l;
    row.fwd_ms = {micro(random), 1000};
    row.bwd_input_ms = {micro(random), 1000};
    row.bwd_weight_ms = {micro(random), 1000};
    row.recompute_ms = row.fwd_ms;
    row.input_bytes = 1024.0 * kib(random) / 8;
    row.output_bytes = row.input_bytes;
    row.activation_bytes_full = 1024.0 * kib(random) * 4;
    if (selective) {
      row.activation_bytes_selective = row.activation_bytes_full * 0.6;
      row.recompute_selective_ms = {micro(random) / 10, 1000};
    }
    row.fwd_peak_temp_bytes = 1024.0 * kib(random) / 4;
    row.bwd_input_peak_temp_bytes = 1024.0 * kib(random) / 4;
    rows.push_back(row);
  }
  return rows;
}

double total_ms(const CheckpointOption &o) { return o.forward_ms + o.backward_ms; }

double sum_ms(const std::vector<CostRow> &rows, Rational CostRow::*field) {
  double sum = 0;
  for (const CostRow &row : rows)
    sum +=
        static_cast<double>((row.*field).numerator) / static_cast<double>((row.*field).denominator);
  return sum;
}

} // namespace

TEST_CASE("issue_13 checkpoint front: monotone, within its levels, exact at both ends") {
  for (const bool selective : {false, true}) {
    for (unsigned seed = 1; seed <= 6; ++seed) {
      CAPTURE(selective);
      CAPTURE(seed);
      const std::vector<CostRow> layers =
          random_layers(2 + static_cast<int>(seed % 5), seed, selective);
      const CheckpointOption whole = store_everything(layers);
      CHECK(whole.forward_ms == doctest::Approx(sum_ms(layers, &CostRow::fwd_ms)));
      CHECK(whole.backward_ms == doctest::Approx(sum_ms(layers, &CostRow::bwd_input_ms) +
                                                 sum_ms(layers, &CostRow::bwd_weight_ms)));
      CHECK(std::all_of(whole.actions.begin(), whole.actions.end(),
                        [](LayerAction a) { return a == LayerAction::store; }));
      const int slots = 400;
      const std::vector<CheckpointOption> front =
          checkpoint_front(layers, 1.5 * whole.peak_bytes, slots, selective);
      REQUIRE(!front.empty());
      // The top level stores everything (or something as fast); lower levels only cost time.
      CHECK(total_ms(front.front()) == doctest::Approx(total_ms(whole)));
      for (std::size_t k = 0; k < front.size(); ++k) {
        const CheckpointOption &o = front[k];
        CHECK(o.peak_bytes <= o.budget_bytes + 1e-6);
        // Every layer's first forward runs once; recomputation is in the backward.
        CHECK(o.forward_ms == doctest::Approx(whole.forward_ms));
        CHECK(o.kept_bytes <= o.peak_bytes);
        if (k > 0) {
          CHECK(total_ms(o) > total_ms(front[k - 1]));
          CHECK(o.budget_bytes < front[k - 1].budget_bytes);
        }
      }
      const bool any_selective =
          std::any_of(front.begin(), front.end(), [](const CheckpointOption &o) {
            return std::count(o.actions.begin(), o.actions.end(), LayerAction::store_selective) > 0;
          });
      CHECK(any_selective == selective);
    }
  }
}

TEST_CASE("issue_13 checkpoint: every layer stored selectively costs exactly the attention "
          "recomputation") {
  const std::vector<CostRow> layers = random_layers(4, 11, true);
  const CheckpointOption whole = store_everything(layers);
  const std::vector<CheckpointOption> front =
      checkpoint_front(layers, 1.5 * whole.peak_bytes, 1000, true);
  const auto all_selective =
      std::find_if(front.begin(), front.end(), [](const CheckpointOption &o) {
        return std::all_of(o.actions.begin(), o.actions.end(),
                           [](LayerAction a) { return a == LayerAction::store_selective; });
      });
  REQUIRE(all_selective != front.end());
  CHECK(all_selective->backward_ms ==
        doctest::Approx(whole.backward_ms + sum_ms(layers, &CostRow::recompute_selective_ms)));
  double kept = 0;
  for (const CostRow &row : layers)
    kept += row.activation_bytes_selective;
  // Kept from F to B: every selective record, plus the stage input the first layer holds.
  CHECK(all_selective->kept_bytes == doctest::Approx(kept + layers.front().input_bytes));
}
