// The incremental device peak of the V family's reorder (docs/schedules.md, "v-min and v-half",
// steps 3-4) against a direct count of the slots, on hand-made rows and random moves.
#include "base/index.h"
#include "sim/schedules/slot_peak.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>

using namespace ppsim::schedules::detail;

namespace {

/// A row from a string: 'F' forward, 'B' backward, 'W' weight, ' ' free.
std::vector<SlotUse> row_of(const std::string &row) {
  std::vector<SlotUse> uses;
  for (const char c : row) {
    uses.push_back(c == 'F'   ? SlotUse::forward
                   : c == 'B' ? SlotUse::backward
                   : c == 'W' ? SlotUse::weight
                              : SlotUse::free);
  }
  return uses;
}

/// Step 3 counted slot by slot: F adds one, W frees one; without W's a free slot frees a pending B.
int counted_peak(const std::vector<SlotUse> &uses, bool free_slots_release) {
  int live = 0, peak = 0, pending = 0;
  for (const SlotUse use : uses) {
    if (use == SlotUse::forward) {
      ++live;
    } else if (use == SlotUse::backward) {
      ++pending;
    } else if (use == SlotUse::weight) {
      --live;
    } else if (free_slots_release && pending > 0) {
      --live;
      --pending;
    }
    peak = std::max(peak, live);
  }
  return peak;
}

} // namespace

TEST_CASE("slot peak of hand-made rows") {
  // With W's: F F W F W W peaks at 2.
  CHECK(SlotPeak(row_of("FFWFWW"), false).peak() == 2);
  // Without W's the free slot after B releases one: F F B _ F B _ _ peaks at 2, F F F B B at 3.
  CHECK(SlotPeak(row_of("FFB FB  "), true).peak() == 2);
  CHECK(SlotPeak(row_of("FFFBB"), true).peak() == 3);
  // A free slot before any B releases nothing.
  CHECK(SlotPeak(row_of("  FF B"), true).peak() == 2);
  CHECK(SlotPeak(row_of("    "), true).peak() == 0);
}

TEST_CASE("slot peak: moving a pass changes the peak as the count does") {
  // F B F _ B _ _: the second F comes before the free slot that releases the first B.
  SlotPeak peak(row_of("FBF B  "), true);
  CHECK(peak.peak() == 2);
  peak.move(2, 3); // F B _ F B: the free slot 2 releases the first B first
  CHECK(peak.peak() == 1);
  peak.move(4, 2); // F B B F _: no release before the second F
  CHECK(peak.peak() == 2);
}

TEST_CASE("slot peak equals the direct count after every random move, both modes") {
  std::mt19937 random(33);
  for (const bool release : {false, true}) {
    for (int trial = 0; trial < 200; ++trial) {
      const int width = 1 + static_cast<int>(random() % 40);
      std::vector<SlotUse> uses;
      for (int s = 0; s < width; ++s) {
        const int kind = static_cast<int>(random() % (release ? 3 : 4));
        uses.push_back(static_cast<SlotUse>(kind));
      }
      SlotPeak peak(uses, release);
      CAPTURE(release);
      CAPTURE(trial);
      REQUIRE(peak.peak() == counted_peak(uses, release));
      for (int step = 0; step < 30; ++step) {
        const auto from = static_cast<std::int64_t>(random() % uses.size());
        const auto to = static_cast<std::int64_t>(random() % uses.size());
        if (uses[ppsim::at(from)] == SlotUse::free || uses[ppsim::at(to)] != SlotUse::free)
          continue;
        peak.move(from, to);
        std::swap(uses[ppsim::at(from)], uses[ppsim::at(to)]);
        REQUIRE(peak.peak() == counted_peak(uses, release));
      }
    }
  }
}
