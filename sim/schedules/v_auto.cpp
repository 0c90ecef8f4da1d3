// Building-block search (docs/schedules.md, "v-auto"): repeat a 6-slot building block, squeeze,
// reorganise the warm-up, reorder greedily without raising the peak, and keep the frontier.
// Source: arXiv 2405.15362 (Pipeline Parallelism with Controllable Memory) sections 3-4 and
// appendix A; sail-sg/zero-bubble-pipeline-parallelism, megatron/core/pipeline_parallel/
// zerobubble/scheduler/v_auto_schedule.py (schedule, schedule_by_building_block).
#include "sim/schedules/v_auto.h"
#include "base/index.h"

#include "base/parallel.h"

#include "sim/schedules/v_auto_steps.h"

#include "base/assert.h"
#include "base/error.h"
#include "sim/memory.h"
#include "sim/schedules/families.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <thread>

namespace ppsim::schedules {
namespace {

using namespace ppsim::schedules::detail;

struct BlockOutcome {
  std::optional<Grid> grid; ///< empty when the block is rejected
  int peak = 0;
};

/// Steps 4-9 for one building block (reference schedule_by_building_block).
BlockOutcome schedule_block(const std::vector<std::array<int, kLetters>> &block, int m, int cap) {
  const int p = static_cast<int>(block.size());
  const int m_red = std::max(m, 2 * p);
  Grid grid = repeat(block, m_red);
  int reference_peak = max_peak(grid);
  if ((m == m_red && reference_peak > cap) || reference_peak > 2 * p)
    return {std::nullopt, reference_peak};
  std::optional<Grid> squeezed = squeeze(grid, m_red);
  if (!squeezed || !reorganize_warmup(*squeezed, m_red))
    return {std::nullopt, reference_peak};
  squeezed = squeeze(*squeezed, m_red);
  if (!squeezed)
    return {std::nullopt, reference_peak};
  int peak = max_peak(*squeezed);
  if (peak > reference_peak)
    return {std::nullopt, reference_peak};
  if (m < m_red) {
    remove_redundancy(*squeezed, m);
    if (m <= p && 2 * m <= cap)
      release_w_in_warmup(*squeezed, std::min(2 * p, peak));
    squeezed = squeeze(*squeezed, m);
    if (!squeezed)
      return {std::nullopt, reference_peak};
    reference_peak = peak = max_peak(*squeezed);
    if (peak > cap)
      return {std::nullopt, peak};
  }
  squeezed = reorganize_cooldown(std::move(*squeezed), m);
  if (!squeezed)
    return {std::nullopt, peak};
  reorder_greedily(*squeezed, m, max_peak(*squeezed));
  if (!relabel_w(*squeezed, m))
    return {std::nullopt, peak};
  peak = max_peak(*squeezed);
  if (peak > reference_peak)
    return {std::nullopt, reference_peak};
  return {std::move(squeezed), peak};
}

/// Device 0's blocks: F at 0, f, B, b at distinct slots of 1..5, W's filled (60 patterns).
std::vector<std::array<int, kLetters>> starting_patterns() {
  std::vector<std::array<int, kLetters>> patterns;
  for (int f = 1; f < kPeriod; ++f) {
    for (int b = 1; b < kPeriod; ++b) {
      for (int bb = 1; bb < kPeriod; ++bb) {
        if (f == b || f == bb || b == bb)
          continue;
        std::array<int, kLetters> pattern{0, f, b, bb, -1, -1};
        fill_w(pattern);
        patterns.push_back(pattern);
      }
    }
  }
  return patterns;
}

/// What one starting pattern contributes: its frontier and its best grid under real costs.
struct PatternResult {
  std::map<int, std::pair<int, std::int64_t>> frontier; ///< peak -> (min bubble, min span)
  std::optional<Grid> best;
  std::int64_t best_span = 0;
  int best_peak = 0;
};

/// Max over devices of last end - first start under `costs`; nullopt when the grid's order
/// misses a dependency (the reference's check_correctness; the timing checks the same order).
std::optional<std::int64_t> max_span(const Grid &grid, int m, const LetterCosts &costs,
                                     Timing &timing) {
  if (!time_grid(grid, m, costs, timing))
    return std::nullopt;
  std::int64_t span = 0;
  for (int i = 0; i < grid.rows; ++i) {
    std::int64_t first = -1, last = 0;
    for (int j = 0; j < grid.width; ++j) {
      const std::size_t cell = grid.index(i, j);
      if (timing.start[cell] < 0)
        continue;
      if (first < 0)
        first = timing.start[cell];
      last = timing.end[cell];
    }
    span = std::max(span, last - first);
  }
  return span;
}

PatternResult search_pattern(const std::array<int, kLetters> &pattern, int p, int m, int cap,
                             const LetterCosts &costs) {
  PatternResult result;
  Timing timing;
  for (int k0 = 1; k0 < kPeriod; ++k0) {
    for (int k1 = 1; k1 <= k0; ++k1) {
      for (int len0 = 1; len0 < p; ++len0) {
        const auto block = building_block(pattern, k0, k1, len0, p);
        if (!block)
          continue;
        BlockOutcome outcome = schedule_block(*block, m, std::min(2 * p, cap));
        // The reference stops this offset pair at the first block over the cap.
        if (outcome.peak > 2 * p || outcome.peak > cap)
          break;
        if (!outcome.grid)
          continue;
        const std::optional<std::int64_t> timed_span = max_span(*outcome.grid, m, costs, timing);
        if (!timed_span)
          continue;
        const std::int64_t span = *timed_span;
        const int bubble = max_bubble(*outcome.grid);
        auto [entry, inserted] = result.frontier.try_emplace(outcome.peak, bubble, span);
        if (!inserted) {
          entry->second.first = std::min(entry->second.first, bubble);
          entry->second.second = std::min(entry->second.second, span);
        }
        if (!result.best || span < result.best_span) {
          result.best = std::move(outcome.grid);
          result.best_span = span;
          result.best_peak = outcome.peak;
        }
      }
    }
  }
  return result;
}

} // namespace

constexpr int kMaxVAutoDevices = 32;

std::optional<Error> v_auto_precondition(const Scenario &scenario,
                                         const GeneratorOptions & /*options*/) {
  if (auto refusal = two_chunks_refusal("v-auto", scenario))
    return refusal;
  const int p = scenario.devices;
  if (p < 2)
    return Error("schedule 'v-auto' needs at least 2 devices (its building blocks span p >= 2)");
  // The search tries O(p) blocks per offset pair, each scheduled on a p-row grid: past 32 devices
  // it runs for minutes (p = 64: about 80 s), so it is refused before it starts
  // (docs/reliability.md, "Limits").
  if (p > kMaxVAutoDevices) {
    return Error(
        "", 0, "-p",
        fmt::format(
            "schedule 'v-auto' (and ppsim frontier) searches at most {} devices, got {}: its "
            "building-block search grows steeply with p (p = 64 takes over a minute)",
            kMaxVAutoDevices, p));
  }
  return std::nullopt;
}

VAutoResult v_auto_search(const Scenario &scenario, std::int64_t cap_chunks, unsigned threads,
                          const ProgressFn &progress) {
  enforce(v_auto_precondition(scenario, {}));
  const int p = scenario.devices;
  const int m = scenario.microbatches;
  const LetterCosts costs = scenario_letter_costs(scenario);
  // No block peaks above 2p chunks (search_pattern stops there), so a larger cap searches the
  // same blocks: clamp it before it meets int arithmetic.
  const int search_cap =
      static_cast<int>(std::clamp<std::int64_t>(cap_chunks, -1, 2 * std::int64_t{p}));
  const std::vector<std::array<int, kLetters>> patterns = starting_patterns();
  std::vector<PatternResult> results(patterns.size());
  std::atomic<std::size_t> next{0};
  ProgressCounter counter(progress, patterns.size());
  auto worker = [&] {
    for (std::size_t k = next++; k < patterns.size(); k = next++) {
      results[k] = search_pattern(patterns[k], p, m, search_cap, costs);
      counter.step_done();
    }
  };
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  run_on_threads(std::min<std::size_t>(threads, patterns.size()), worker);

  // Merge in pattern order, so the first strictly better schedule wins whatever the threads.
  std::map<int, std::pair<int, std::int64_t>> frontier;
  const PatternResult *best = nullptr;
  for (const PatternResult &result : results) {
    for (const auto &[peak, point] : result.frontier) {
      auto [entry, inserted] = frontier.try_emplace(peak, point);
      if (!inserted) {
        entry->second.first = std::min(entry->second.first, point.first);
        entry->second.second = std::min(entry->second.second, point.second);
      }
    }
    if (result.best && (best == nullptr || result.best_span < best->best_span))
      best = &result;
  }
  if (best == nullptr) {
    throw CapUnreachable(
        fmt::format("schedule 'v-auto' found no building block within {} chunk activations "
                    "per device (--K {})",
                    cap_chunks, static_cast<double>(cap_chunks) / 2.0));
  }
  VAutoResult out;
  for (const auto &[peak, point] : frontier)
    out.frontier.push_back({peak, point.first, Ticks{point.second}});
  out.best_peak_chunks = best->best_peak;
  out.best_span = Ticks{best->best_span};
  TimedSchedule timed = timed_schedule(scenario, *best->best, m);
  out.best = std::move(timed.schedule);
  out.best_end = std::move(timed.end);
  return out;
}

Schedule v_auto(const Scenario &scenario, const GeneratorOptions & /*options*/) {
  return v_auto_search(scenario, v_auto_cap_chunks(scenario)).best;
}

std::int64_t v_auto_cap_chunks(const Scenario &scenario) {
  // --K is in device shares; the search cap M is in chunk activations (docs/schedules.md,
  // "v-auto").
  if (!scenario.activations.cap)
    return 2 * std::int64_t{scenario.devices};
  const double twice = std::floor(2 * *scenario.activations.cap + 1e-9);
  constexpr double kSaturated = 0x1p62;
  if (!(twice < kSaturated))
    return std::int64_t{1} << 62;
  return static_cast<std::int64_t>(twice);
}

} // namespace ppsim::schedules
