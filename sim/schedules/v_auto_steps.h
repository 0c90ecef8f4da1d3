#pragma once
// The steps of v-auto's building-block search (docs/schedules.md, "v-auto"; arXiv 2405.15362,
// sections 3-4 and appendix A): building blocks, their repetition, the warm-up and cool-down
// reorganisations, the greedy reorder and W relabelling, each a transformation of the slot grid.
// Internal to sim/schedules: v_auto.cpp strings them together.
#include "sim/schedules/v_grid.h"

#include <array>
#include <optional>
#include <vector>

namespace ppsim::schedules::detail {

constexpr int kPeriod = 6; ///< slots of a building block

/// Peak of F/f minus W/w along each row (chunk activations, W frees the chunk).
std::vector<int> row_peaks(const Grid &grid);

/// The largest of row_peaks.
int max_peak(const Grid &grid);

/// Step 1: W(b) and W(a) at the first free slot (cyclically) after B and b.
void fill_w(std::array<int, kLetters> &block);

/// Step 2: device i+1's block moves (F, f, B, b) of device i by (k, -1, k, -1) mod 6, with
/// k = offset0 for the first len0 transitions and offset1 after; nullopt on a collision.
std::optional<std::vector<std::array<int, kLetters>>>
building_block(std::array<int, kLetters> first, int offset0, int offset1, int len0, int p);

/// Step 4, repeat: each row is its block written 4p + m' + 1 times; keep for each letter
/// exactly m' consecutive occurrences, chosen with one running column pointer.
Grid repeat(const std::vector<std::array<int, kLetters>> &block, int m_red);

/// Step 6: rewrite each row's warm-up (everything before its first b) in the canonical
/// F... (F f)... (B W f|F)... shape with per-device quotas; false if it overruns the row.
bool reorganize_warmup(Grid &grid, int m_red);

/// Keeps the first m occurrences of every letter on each row.
void remove_redundancy(Grid &grid, int m);

/// Cool-down reorganisation (reference process_cooldown, between steps 7 and 8): after the
/// last f, device i keeps its last (peak+1) div 2 b's and min(i+1, rest) B's in a tight
/// staircase aligned on device 0's last f, drops the tail W's and refills them FIFO in the free
/// cells after the last remaining W, then squeezes. Nullopt when the staircase leaves the grid.
std::optional<Grid> reorganize_cooldown(Grid grid, int m);

/// Step 7: with few microbatches, move each device's first (cap - peak_i) W/w cells to the end
/// of its row so the warm-up can use the memory.
void release_w_in_warmup(Grid &grid, int cap);

/// Step 8: fill each vacant cell with the first later pass of the device that may move there
/// without raising the peak above `cap` and with its dependency already scanned.
void reorder_greedily(Grid &grid, int m, int cap);

/// Step 9: W cells take the chunk of the B/b they release, in FIFO order; false when a row
/// does not hold every letter exactly m times.
bool relabel_w(Grid &grid, int m);

/// Step 9: bubble of device i = (last non-empty column + 1) - passes - i; max over devices.
int max_bubble(const Grid &grid);

} // namespace ppsim::schedules::detail
