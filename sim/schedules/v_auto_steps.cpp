// The steps of v-auto's building-block search (docs/schedules.md, "v-auto"). Source:
// arXiv 2405.15362 sections 3-4 and appendix A; sail-sg/zero-bubble-pipeline-parallelism,
// megatron/core/pipeline_parallel/zerobubble/scheduler/v_auto_schedule.py.
#include "sim/schedules/v_auto_steps.h"

#include "base/assert.h"
#include "base/index.h"

#include <algorithm>
#include <cstdint>

namespace ppsim::schedules::detail {

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
    used[at(block[at(letter)])] = true;
  for (const auto &[backward, weight] : {std::pair{kB, kW}, std::pair{kb, kw}}) {
    for (int j = 0; j < kPeriod; ++j) {
      const int slot = (block[at(backward)] + j) % kPeriod;
      if (!used[at(slot)]) {
        block[at(weight)] = slot;
        used[at(slot)] = true;
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
      if (used[at(slot)])
        return std::nullopt;
      used[at(slot)] = true;
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
        grid.at(i, kPeriod * c + block[at(i)][at(letter)]) = static_cast<std::int8_t>(letter);
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
        ++seen[at(grid.at(i, j))];
      grid.at(i, j) = kEmpty;
    }
    std::array<int, kLetters> written{};
    int j = i;
    auto write = [&](int letter, bool condition) {
      if (j >= grid.width)
        return false;
      if (condition) {
        grid.at(i, j) = static_cast<std::int8_t>(letter);
        ++written[at(letter)];
      }
      ++j;
      return true;
    };
    auto left = [&](int letter) { return written[at(letter)] < seen[at(letter)]; };
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
      if (letter != kEmpty && ++seen[at(letter)] > m)
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
  std::vector<std::vector<std::int8_t>> rows(at(p));
  std::size_t width = 0;
  for (int i = 0; i < p; ++i) {
    auto &row = rows[at(i)];
    row.assign(grid.cells.begin() + static_cast<std::ptrdiff_t>(i) * grid.width,
               grid.cells.begin() + static_cast<std::ptrdiff_t>(i + 1) * grid.width);
    int last_w = -1;
    for (int j = grid.width - 1; j >= 0 && last_w < 0; --j) {
      if (is_weight(row[at(j)]))
        last_w = j;
    }
    int pending_w = 0, pending_ww = 0;
    for (int j = 0; j < grid.width; ++j) {
      std::int8_t &cell = row[at(j)];
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
    const auto &row = rows[at(i)];
    std::copy(row.begin(), row.end(),
              refilled.cells.begin() + static_cast<std::ptrdiff_t>(i) * refilled.width);
  }
  return squeeze(refilled, m);
}

/// Step 7: with few microbatches, move each device's first (cap - peak_i) W/w cells to the end
/// of its row so the warm-up can use the memory.
void release_w_in_warmup(Grid &grid, int cap) {
  const std::vector<int> peaks = row_peaks(grid);
  const int lowest = *std::min_element(peaks.begin(), peaks.end());
  const int padding = std::max(0, cap - lowest);
  const int width = grid.width;
  grid.resize(width + padding);
  for (int i = 0; i < grid.rows; ++i) {
    int moved = 0;
    for (int j = 0; j < width && peaks[at(i)] + moved < cap; ++j) {
      if (is_weight(grid.at(i, j))) {
        grid.at(i, width + moved) = grid.at(i, j);
        grid.at(i, j) = kEmpty;
        ++moved;
      }
    }
  }
}

/// Step 8: fill each vacant cell with the first later pass of the device that may move there
/// without raising the peak above `cap` and with its dependency already scanned.
void reorder_greedily(Grid &grid, int m, int cap) {
  const int p = grid.rows;
  std::vector<std::array<int, kLetters>> last(at(p));
  for (int i = 0; i < p; ++i) {
    last[at(i)].fill(-1);
    for (int j = 0; j < grid.width; ++j) {
      if (grid.at(i, j) != kEmpty)
        last[at(i)][at(grid.at(i, j))] = j;
    }
  }
  std::vector<int> memory(at(p), 0);
  std::vector<std::array<int, kLetters>> count(at(p), std::array<int, kLetters>{});
  // column[(letter * m + mb) * p + i] of the scanned pass, -1 before
  std::vector<int> column(at(kLetters) * at(m) * at(p), -1);
  auto key = [&](int letter, int mb, int i) {
    return (at(letter) * at(m) + at(mb)) * at(p) + at(i);
  };
  auto scan = [&](int i, int j, int letter) {
    int &k = count[at(i)][at(letter)];
    if (k < m)
      column[key(letter, k, i)] = j;
    ++k;
    if (is_forward(letter))
      ++memory[at(i)];
    if (is_weight(letter))
      --memory[at(i)];
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
        available[at(letter)] = last[at(i)][at(letter)] > j;
        remaining += available[at(letter)] ? 1 : 0;
      }
      int delta = 0, running_max = 0;
      const auto &counts = count[at(i)];
      for (int k = j + 1; k < grid.width && remaining > 0; ++k) {
        const int letter = grid.at(i, k);
        if (is_forward(letter))
          ++delta;
        if (is_weight(letter))
          --delta;
        const int before = running_max;
        running_max = std::max(running_max, delta);
        if (letter == kEmpty || !available[at(letter)])
          continue;
        available[at(letter)] = false;
        --remaining;
        if (is_forward(letter) && memory[at(i)] + before >= cap)
          continue;
        const int mb = counts[at(letter)];
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
            can_move = counts[at(letter - 1)] > mb;
        } else {
          can_move = counts[at(letter - 2)] > mb;
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
      ++seen[at(letter)];
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

} // namespace ppsim::schedules::detail
