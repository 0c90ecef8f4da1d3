// Building-block search (docs/schedules.md, "v-auto"): repeat a 6-slot building block, squeeze,
// reorganise the warm-up, reorder greedily without raising the peak, and keep the frontier.
// Source: arXiv 2405.15362 (Pipeline Parallelism with Controllable Memory) sections 3-4 and
// appendix A; sail-sg/zero-bubble-pipeline-parallelism, megatron/core/pipeline_parallel/
// zerobubble/scheduler/v_auto_schedule.py (schedule, schedule_by_building_block).
#include "sim/schedules/v_auto.h"

#include "base/parallel.h"

#include "sim/schedules/v_grid.h"

#include "base/assert.h"
#include "base/error.h"
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

constexpr int kPeriod = 6; ///< slots of a building block
/// Peak of F/f minus W/w along each row (chunk activations, W frees the chunk).
std::vector<int> row_peaks(const Grid &grid) {
  std::vector<int> peaks;
  for (int i = 0; i < grid.rows; ++i) {
    int current = 0, peak = 0;
    for (int j = 0; j < grid.width; ++j) {
      const int letter = grid.at(i, j);
      if (is_forward(letter))
        ++current;
      if (is_weight(letter))
        --current;
      peak = std::max(peak, current);
    }
    peaks.push_back(peak);
  }
  return peaks;
}

int max_peak(const Grid &grid) {
  const std::vector<int> peaks = row_peaks(grid);
  return *std::max_element(peaks.begin(), peaks.end());
}

/// Step 1: W(b) and W(a) at the first free slot (cyclically) after B and b.
void fill_w(std::array<int, kLetters> &block) {
  std::array<bool, kPeriod> used{};
  for (int letter = 0; letter < 4; ++letter)
    used[static_cast<std::size_t>(block[static_cast<std::size_t>(letter)])] = true;
  for (const auto &[backward, weight] : {std::pair{kB, kW}, std::pair{kb, kw}}) {
    for (int j = 0; j < kPeriod; ++j) {
      const int slot = (block[static_cast<std::size_t>(backward)] + j) % kPeriod;
      if (!used[static_cast<std::size_t>(slot)]) {
        block[static_cast<std::size_t>(weight)] = slot;
        used[static_cast<std::size_t>(slot)] = true;
        break;
      }
    }
  }
}

/// Step 2: device i+1's block moves (F, f, B, b) of device i by (k, -1, k, -1) mod 6, with
/// k = offset0 for the first len0 transitions and offset1 after; nullopt on a collision.
std::optional<std::vector<std::array<int, kLetters>>>
building_block(std::array<int, kLetters> first, int offset0, int offset1, int len0, int p) {
  std::vector<std::array<int, kLetters>> block{first};
  for (int i = 0; i + 1 < p; ++i) {
    const int k = i < len0 ? offset0 : offset1;
    const std::array<int, 4> shift{k, -1, k, -1};
    std::array<int, kLetters> next{};
    std::array<bool, kPeriod> used{};
    for (std::size_t letter = 0; letter < 4; ++letter) {
      const int slot = (block.back()[letter] + shift[letter] + kPeriod) % kPeriod;
      if (used[static_cast<std::size_t>(slot)])
        return std::nullopt;
      used[static_cast<std::size_t>(slot)] = true;
      next[letter] = slot;
    }
    fill_w(next);
    block.push_back(next);
  }
  return block;
}

/// Step 4, repeat: each row is its block written 4p + m' + 1 times; keep for each letter
/// exactly m' consecutive occurrences, chosen with one running column pointer.
Grid repeat(const std::vector<std::array<int, kLetters>> &block, int m_red) {
  const int p = static_cast<int>(block.size());
  const int copies = 4 * p + m_red + 1;
  Grid grid(p, kPeriod * copies);
  for (int i = 0; i < p; ++i) {
    for (int letter = 0; letter < kLetters; ++letter) {
      for (int c = 0; c < copies; ++c)
        grid.at(i, kPeriod * c +
                       block[static_cast<std::size_t>(i)][static_cast<std::size_t>(letter)]) =
            static_cast<std::int8_t>(letter);
    }
  }
  auto clear_outside = [&](int i, int column) {
    for (int j = column - kPeriod; j >= 0; j -= kPeriod)
      grid.at(i, j) = kEmpty;
    for (int j = column + kPeriod * m_red; j < grid.width; j += kPeriod)
      grid.at(i, j) = kEmpty;
  };
  int index = kPeriod;
  for (const int letter : {kF, kf, kB, kb}) {
    for (int step = 0; step < p; ++step) {
      const int i = flows_down(letter) ? step : p - 1 - step;
      for (int j = 0; j < kPeriod; ++j) {
        if (grid.at(i, index) != letter) {
          ++index;
          continue;
        }
        clear_outside(i, index);
        ++index;
        if (letter == kB || letter == kb) {
          for (int k = 0; k < kPeriod; ++k) {
            if (grid.at(i, index + k) == letter + 2) {
              clear_outside(i, index + k);
              break;
            }
          }
        }
        break;
      }
    }
  }
  return grid;
}

/// Step 6: rewrite each row's warm-up (everything before its first b) in the canonical
/// F... (F f)... (B W f|F)... shape with per-device quotas; false if it overruns the row.
bool reorganize_warmup(Grid &grid, int m_red) {
  const int p = grid.rows;
  const int peak = std::min(max_peak(grid), 2 * p);
  for (int i = 0; i < p; ++i) {
    const int quota_f = std::min({i + 1, peak / 2, m_red});
    const int quota_fa = std::min(peak - quota_f, m_red);
    std::array<int, kLetters> seen{};
    for (int j = 0; j < grid.width && grid.at(i, j) != kb; ++j) {
      if (grid.at(i, j) != kEmpty)
        ++seen[static_cast<std::size_t>(grid.at(i, j))];
      grid.at(i, j) = kEmpty;
    }
    std::array<int, kLetters> written{};
    int j = i;
    auto write = [&](int letter, bool condition) {
      if (j >= grid.width)
        return false;
      if (condition) {
        grid.at(i, j) = static_cast<std::int8_t>(letter);
        ++written[static_cast<std::size_t>(letter)];
      }
      ++j;
      return true;
    };
    auto left = [&](int letter) {
      return written[static_cast<std::size_t>(letter)] < seen[static_cast<std::size_t>(letter)];
    };
    auto fa_allowed = [&] { return written[kF] < quota_fa && left(kF); };
    for (int k = 0; k < 2 * (p - 1 - i); ++k) {
      if (!write(kF, fa_allowed()))
        return false;
    }
    for (int k = 0; k < i + 1; ++k) {
      if (!write(kF, fa_allowed()))
        return false;
      if (!write(kf, written[kf] < quota_f && left(kf)))
        return false;
    }
    while (left(kF) || left(kf) || left(kB) || left(kW)) {
      if (!write(kB, left(kB)))
        return false;
      if (!write(kW, left(kW)))
        return false;
      const int last = left(kf) ? kf : kF;
      if (!write(last, left(last)))
        return false;
    }
  }
  return true;
}

/// Keeps the first m occurrences of every letter on each row.
void remove_redundancy(Grid &grid, int m) {
  for (int i = 0; i < grid.rows; ++i) {
    std::array<int, kLetters> seen{};
    for (int j = 0; j < grid.width; ++j) {
      const int letter = grid.at(i, j);
      if (letter != kEmpty && ++seen[static_cast<std::size_t>(letter)] > m)
        grid.at(i, j) = kEmpty;
    }
  }
}

/// Cool-down reorganisation (reference process_cooldown, between steps 7 and 8): after the
/// last f, device i keeps its last (peak+1) div 2 b's and min(i+1, rest) B's in a tight
/// staircase aligned on device 0's last f, drops the tail W's and refills them FIFO in the free
/// cells after the last remaining W, then squeezes. Nullopt when the staircase leaves the grid.
std::optional<Grid> reorganize_cooldown(Grid grid, int m) {
  const int p = grid.rows;
  const int peak = max_peak(grid);
  const int limit_ba = std::min((peak + 1) / 2, m);
  const int limit_bb = std::min(peak - limit_ba, m);
  int anchor = -1;
  for (int i = 0; i < p; ++i) {
    int moved_bb = 0, moved_ba = 0, moved_wb = 0, moved_wa = 0, last_f = -1;
    for (int j = grid.width - 1; j >= 0; --j) {
      const int letter = grid.at(i, j);
      if (letter == kf && last_f < 0)
        last_f = j;
      if (letter == kB && moved_bb < i + 1 && moved_bb < limit_bb) {
        grid.at(i, j) = kEmpty;
        ++moved_bb;
      }
      if (letter == kb && moved_ba < limit_ba) {
        grid.at(i, j) = kEmpty;
        ++moved_ba;
      }
    }
    for (int j = grid.width - 1; j >= 0; --j) {
      if (moved_wb >= moved_bb && moved_wa >= moved_ba && moved_wb + moved_wa >= peak)
        break;
      if (grid.at(i, j) == kW) {
        grid.at(i, j) = kEmpty;
        ++moved_wb;
      } else if (grid.at(i, j) == kw) {
        grid.at(i, j) = kEmpty;
        ++moved_wa;
      }
    }
    if (i == 0)
      anchor = last_f;
    for (int k = 0; k < moved_ba; ++k) {
      const int j = anchor - i + 2 * p - 2 * k;
      if (j < 0 || j >= grid.width || grid.at(i, j) != kEmpty)
        return std::nullopt;
      grid.at(i, j) = kb;
    }
    for (int k = 0; k < moved_bb; ++k) {
      const int j = anchor + 1 + i - 2 * k;
      if (j < 0 || j >= grid.width)
        return std::nullopt;
      grid.at(i, j) = kB;
    }
  }
  // Put the W's back: FIFO after the last remaining W/w, then appended.
  std::vector<std::vector<std::int8_t>> rows(static_cast<std::size_t>(p));
  std::size_t width = 0;
  for (int i = 0; i < p; ++i) {
    auto &row = rows[static_cast<std::size_t>(i)];
    row.assign(grid.cells.begin() + static_cast<std::ptrdiff_t>(i) * grid.width,
               grid.cells.begin() + static_cast<std::ptrdiff_t>(i + 1) * grid.width);
    int last_w = -1;
    for (int j = grid.width - 1; j >= 0 && last_w < 0; --j) {
      if (is_weight(row[static_cast<std::size_t>(j)]))
        last_w = j;
    }
    int pending_w = 0, pending_ww = 0;
    for (int j = 0; j < grid.width; ++j) {
      std::int8_t &cell = row[static_cast<std::size_t>(j)];
      if (cell == kB)
        ++pending_w;
      if (cell == kb)
        ++pending_ww;
      if (cell == kW)
        --pending_w;
      if (cell == kw)
        --pending_ww;
      if (cell == kEmpty && j > last_w) {
        if (pending_w > 0) {
          cell = kW;
          --pending_w;
        } else if (pending_ww > 0) {
          cell = kw;
          --pending_ww;
        }
      }
    }
    for (; pending_w > 0; --pending_w)
      row.push_back(kW);
    for (; pending_ww > 0; --pending_ww)
      row.push_back(kw);
    width = std::max(width, row.size());
  }
  Grid refilled(p, static_cast<int>(width));
  for (int i = 0; i < p; ++i) {
    const auto &row = rows[static_cast<std::size_t>(i)];
    std::copy(row.begin(), row.end(),
              refilled.cells.begin() + static_cast<std::ptrdiff_t>(i) * refilled.width);
  }
  return squeeze(refilled, m);
}

/// Step 7: with few microbatches, move each device's first (limit - peak_i) W/w cells to the end
/// of its row so the warm-up can use the memory.
void release_w_in_warmup(Grid &grid, int limit) {
  const std::vector<int> peaks = row_peaks(grid);
  const int lowest = *std::min_element(peaks.begin(), peaks.end());
  const int padding = std::max(0, limit - lowest);
  const int width = grid.width;
  grid.resize(width + padding);
  for (int i = 0; i < grid.rows; ++i) {
    int moved = 0;
    for (int j = 0; j < width && peaks[static_cast<std::size_t>(i)] + moved < limit; ++j) {
      if (is_weight(grid.at(i, j))) {
        grid.at(i, width + moved) = grid.at(i, j);
        grid.at(i, j) = kEmpty;
        ++moved;
      }
    }
  }
}

/// Step 8: fill each vacant cell with the first later pass of the device that may move there
/// without raising the peak above `limit` and with its dependency already scanned.
void reorder_greedily(Grid &grid, int m, int limit) {
  const int p = grid.rows;
  std::vector<std::array<int, kLetters>> last(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) {
    last[static_cast<std::size_t>(i)].fill(-1);
    for (int j = 0; j < grid.width; ++j) {
      if (grid.at(i, j) != kEmpty)
        last[static_cast<std::size_t>(i)][static_cast<std::size_t>(grid.at(i, j))] = j;
    }
  }
  std::vector<int> memory(static_cast<std::size_t>(p), 0);
  std::vector<std::array<int, kLetters>> count(static_cast<std::size_t>(p),
                                               std::array<int, kLetters>{});
  // column[(letter * m + mb) * p + i] of the scanned pass, -1 before
  std::vector<int> column(static_cast<std::size_t>(kLetters) * static_cast<std::size_t>(m) *
                              static_cast<std::size_t>(p),
                          -1);
  auto key = [&](int letter, int mb, int i) {
    return (static_cast<std::size_t>(letter) * static_cast<std::size_t>(m) +
            static_cast<std::size_t>(mb)) *
               static_cast<std::size_t>(p) +
           static_cast<std::size_t>(i);
  };
  auto scan = [&](int i, int j, int letter) {
    int &k = count[static_cast<std::size_t>(i)][static_cast<std::size_t>(letter)];
    if (k < m)
      column[key(letter, k, i)] = j;
    ++k;
    if (is_forward(letter))
      ++memory[static_cast<std::size_t>(i)];
    if (is_weight(letter))
      --memory[static_cast<std::size_t>(i)];
  };
  for (int j = 0; j < grid.width; ++j) {
    for (int i = 0; i < p; ++i) {
      if (grid.at(i, j) != kEmpty) {
        scan(i, j, grid.at(i, j));
        continue;
      }
      std::array<bool, kLetters> available{};
      int remaining = 0;
      for (int letter = 0; letter < kLetters; ++letter) {
        available[static_cast<std::size_t>(letter)] =
            last[static_cast<std::size_t>(i)][static_cast<std::size_t>(letter)] > j;
        remaining += available[static_cast<std::size_t>(letter)] ? 1 : 0;
      }
      int delta = 0, running_max = 0;
      const auto &counts = count[static_cast<std::size_t>(i)];
      for (int k = j + 1; k < grid.width && remaining > 0; ++k) {
        const int letter = grid.at(i, k);
        if (is_forward(letter))
          ++delta;
        if (is_weight(letter))
          --delta;
        const int before = running_max;
        running_max = std::max(running_max, delta);
        if (letter == kEmpty || !available[static_cast<std::size_t>(letter)])
          continue;
        available[static_cast<std::size_t>(letter)] = false;
        --remaining;
        if (is_forward(letter) && memory[static_cast<std::size_t>(i)] + before >= limit)
          continue;
        const int mb = counts[static_cast<std::size_t>(letter)];
        auto scanned_before = [&](int from) {
          if (mb >= m)
            return false;
          const int at = column[key(letter, mb, from)];
          return at >= 0 && at < j;
        };
        bool can_move = true;
        if (letter == kF || letter == kB) {
          if (i > 0)
            can_move = scanned_before(i - 1);
          else if (letter == kB)
            can_move = counts[kf] > mb;
        } else if (letter == kf || letter == kb) {
          if (i + 1 < p)
            can_move = scanned_before(i + 1);
          else
            can_move = counts[static_cast<std::size_t>(letter - 1)] > mb;
        } else {
          can_move = counts[static_cast<std::size_t>(letter - 2)] > mb;
        }
        if (!can_move)
          continue;
        grid.at(i, j) = static_cast<std::int8_t>(letter);
        grid.at(i, k) = kEmpty;
        scan(i, j, letter);
        break;
      }
    }
  }
}

/// Step 9: W cells take the chunk of the B/b they release, in FIFO order; false when a row
/// does not hold every letter exactly m times.
bool relabel_w(Grid &grid, int m) {
  for (int i = 0; i < grid.rows; ++i) {
    std::array<int, kLetters> seen{};
    std::vector<std::int8_t> queue;
    std::size_t head = 0;
    for (int j = 0; j < grid.width; ++j) {
      const int letter = grid.at(i, j);
      if (letter == kEmpty)
        continue;
      ++seen[static_cast<std::size_t>(letter)];
      if (letter == kB || letter == kb)
        queue.push_back(static_cast<std::int8_t>(letter + 2));
      if (is_weight(letter)) {
        if (head == queue.size())
          return false;
        grid.at(i, j) = queue[head++];
      }
    }
    for (const int n : seen) {
      if (n != m)
        return false;
    }
  }
  return true;
}

/// Step 9: bubble of device i = (last non-empty column + 1) - passes - i; max over devices.
int max_bubble(const Grid &grid) {
  int worst = 0;
  for (int i = 0; i < grid.rows; ++i) {
    int length = 0, passes = 0;
    for (int j = 0; j < grid.width; ++j) {
      if (grid.at(i, j) != kEmpty) {
        length = j + 1;
        ++passes;
      }
    }
    worst = std::max(worst, length - passes - i);
  }
  return worst;
}

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

PatternResult search_pattern(const std::array<int, kLetters> &pattern, int p, int m, int limit,
                             const LetterCosts &costs) {
  PatternResult result;
  Timing timing;
  for (int k0 = 1; k0 < kPeriod; ++k0) {
    for (int k1 = 1; k1 <= k0; ++k1) {
      for (int len0 = 1; len0 < p; ++len0) {
        const auto block = building_block(pattern, k0, k1, len0, p);
        if (!block)
          continue;
        BlockOutcome outcome = schedule_block(*block, m, std::min(2 * p, limit));
        // The reference stops this offset pair at the first block over the limit.
        if (outcome.peak > 2 * p || outcome.peak > limit)
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

VAutoResult v_auto_search(const Scenario &scenario, std::int64_t limit_chunks, unsigned threads) {
  if (scenario.chunks != 2 || scenario.pipes != 1) {
    throw Error(
        fmt::format("schedule 'v-auto' needs exactly 2 stages per device (v = 2), got v = {}",
                    scenario.chunks));
  }
  const int p = scenario.devices;
  const int m = scenario.microbatches;
  if (p < 2)
    throw Error("schedule 'v-auto' needs at least 2 devices (its building blocks span p >= 2)");
  // The search tries O(p) blocks per offset pair, each scheduled on a p-row grid: past 32 devices
  // it runs for minutes (p = 64: about 80 s), so it is refused before it starts
  // (docs/reliability.md, "Limits").
  if (p > kMaxVAutoDevices) {
    throw Error("", 0, "-p",
                fmt::format("schedule 'v-auto' (and ppsim frontier) searches at most {} devices, got {}: its "
                            "building-block search grows steeply with p (p = 64 takes over a minute)",
                            kMaxVAutoDevices, p));
  }
  const LetterCosts costs = scenario_letter_costs(scenario);
  // No block peaks above 2p chunks (search_pattern stops there), so a larger limit searches the
  // same blocks: clamp it before it meets int arithmetic.
  const int search_limit = static_cast<int>(std::clamp<std::int64_t>(limit_chunks, -1, 2 * std::int64_t{p}));
  const std::vector<std::array<int, kLetters>> patterns = starting_patterns();
  std::vector<PatternResult> results(patterns.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t k = next++; k < patterns.size(); k = next++) {
      results[k] = search_pattern(patterns[k], p, m, search_limit, costs);
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
    throw Error(fmt::format("schedule 'v-auto' found no building block within {} chunk activations "
                            "per device (--K {})",
                            limit_chunks, static_cast<double>(limit_chunks) / 2.0));
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
  return v_auto_search(scenario, v_auto_limit_chunks(scenario)).best;
}

std::int64_t v_auto_limit_chunks(const Scenario &scenario) {
  // --K is in device shares; the search limit M is in chunk activations (docs/schedules.md,
  // "v-auto").
  if (!scenario.activations.cap) return 2 * std::int64_t{scenario.devices};
  const double twice = std::floor(2 * *scenario.activations.cap + 1e-9);
  constexpr double kSaturated = 0x1p62;
  if (!(twice < kSaturated)) return std::int64_t{1} << 62;
  return static_cast<std::int64_t>(twice);
}

} // namespace ppsim::schedules
