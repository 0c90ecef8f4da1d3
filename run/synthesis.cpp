// Schedule synthesis (docs/synthesis.md): seed, local search on the per-device orders, exact
// optimum on tiny instances, certified gap.
#include "run/synthesis.h"
#include "base/index.h"

#include "base/assert.h"
#include "base/error.h"
#include "bounds/analyzer.h"
#include "bounds/exact.h"
#include "bounds/incumbent.h"
#include "sim/memory.h"
#include "sim/metrics.h"
#include "sim/retime.h"
#include "sim/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>

namespace ppsim {
namespace {

using Clock = std::chrono::steady_clock;

/// Moves the entry at `from` of `ops` to position `to`, shifting the entries between by one.
void move_entry(std::vector<Op> &ops, int from, int to) {
  const auto begin = ops.begin();
  if (from < to)
    std::rotate(begin + from, begin + from + 1, begin + to + 1);
  else
    std::rotate(begin + to, begin + from, begin + from + 1);
}

/// Local search on the per-device orders (docs/synthesis.md, "The search"): move one entry of
/// one device to another position, keep the move when the candidate is valid and not worse in
/// (makespan, total device end), undo it otherwise. Sideways moves let the search cross
/// plateaus of equal makespan; the seeded generator makes every run of the same input equal.
class LocalSearch {
public:
  LocalSearch(const Scenario &scenario, Schedule seed, CandidateTime seed_time,
              std::uint64_t random_seed)
      : scenario_(scenario), schedule_(std::move(seed)), time_(seed_time), random_(random_seed) {}

  /// Tries one random move (none when it would leave the entry where it is).
  void step() {
    const int devices = schedule_.device_count();
    const int device = std::uniform_int_distribution<int>(0, devices - 1)(random_);
    std::vector<Op> &ops = schedule_.device_ops[at(device)];
    const int size = static_cast<int>(ops.size());
    PPSIM_ASSERT(size >= 2); // every device runs a forward and a backward of its stages
    const int from = std::uniform_int_distribution<int>(0, size - 1)(random_);
    // Half the moves are short (a swap with a neighbour or a few places), half reach anywhere on
    // the device (a W deferred into a far bubble, a forward pulled into the warm-up).
    const int reach = std::bernoulli_distribution(0.5)(random_) ? std::min(4, size - 1) : size - 1;
    int distance = std::uniform_int_distribution<int>(1, reach)(random_);
    if (std::bernoulli_distribution(0.5)(random_))
      distance = -distance;
    const int to = std::clamp(from + distance, 0, size - 1);
    if (to == from)
      return;
    move_entry(ops, from, to);
    ++evaluations_;
    const std::optional<CandidateTime> candidate = evaluate(scenario_, schedule_);
    if (candidate && *candidate <= time_) {
      if (*candidate < time_)
        ++improvements_;
      time_ = *candidate;
    } else {
      move_entry(ops, to, from);
    }
  }

  [[nodiscard]] const Schedule &schedule() const { return schedule_; }
  [[nodiscard]] CandidateTime time() const { return time_; }
  [[nodiscard]] std::int64_t evaluations() const { return evaluations_; }
  [[nodiscard]] std::int64_t improvements() const { return improvements_; }

private:
  const Scenario &scenario_;
  Schedule schedule_;
  CandidateTime time_;
  std::mt19937_64 random_;
  std::int64_t evaluations_ = 0;
  std::int64_t improvements_ = 0;
};

/// The name of the largest makespan bound of `report` (the first one on ties).
std::string best_bound_name(const BoundsReport &report) {
  for (const NamedBound &bound : report.lower_bounds)
    if (bound.bounds_makespan && bound.value == report.best_lower_bound)
      return bound.name;
  return "none";
}

/// The exact optimum applies: count or zb memory, no contention (docs/bounds.md, "Exact
/// optimum"), and the caller did not switch it off.
bool exact_applies(const Scenario &scenario, const SynthesisOptions &options) {
  return options.exact_max_start_variables > 0 && scenario.memory_model != MemoryModel::bytes &&
         !scenario.link.contention && !scenario.link.blocking;
}

} // namespace

std::optional<CandidateTime> evaluate(const Scenario &scenario, const Schedule &schedule) {
  try {
    validate_schedule(scenario, schedule);
    // Peaks depend on the orders only (docs/model.md, "Memory"): the cap is checked before any
    // timing, and the orders are timed by the re-timer, which gives the engine's times exactly
    // (docs/model.md, "Re-timing fixed orders").
    const MemoryTrack &track = checked_track(scenario);
    if (track.cap) {
      for (const double peak : device_peaks(scenario, schedule, track))
        if (over_cap(peak, *track.cap))
          return std::nullopt;
    }
    const Retimer timing(scenario, schedule);
    Ticks total{0};
    for (int device = 0; device < schedule.device_count(); ++device) {
      const auto ops = static_cast<int>(schedule.device_ops[at(device)].size());
      if (ops > 0)
        total += timing.end(device, ops - 1);
    }
    return CandidateTime{timing.makespan(), total};
  } catch (const Error &) { // a rule of docs/model.md broken, or a deadlock
    return std::nullopt;
  }
}

std::string_view describe(SynthesisStop stop) {
  switch (stop) {
  case SynthesisStop::bound_met:
    return "bound met";
  case SynthesisStop::exact_optimum:
    return "exact optimum";
  case SynthesisStop::evaluation_limit:
    return "evaluation limit";
  case SynthesisStop::time_limit:
    return "time limit";
  }
  return "";
}

double SynthesisResult::gap() const {
  if (lower_bound.count() == 0)
    return 0;
  return static_cast<double>(makespan.count()) / static_cast<double>(lower_bound.count()) - 1;
}

SynthesisResult synthesize(const Scenario &scenario, BackwardForm form,
                           const SynthesisOptions &options) {
  const Clock::time_point start = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  // The bounds take an overlapped F&B op as long as its parts (docs/bounds.md): a shorter one
  // could beat them, and a gap measured against them would certify nothing.
  if (scenario.overlap_duration)
    throw Error("", 0, "pipeline.overlap_fb",
                "synthesis certifies its gap with lower bounds that take an overlapped F&B op as "
                "long as its parts; leave overlap_fb at its default");
  const BoundsReport bounds = compute_bounds(scenario, BoundsOptions{form, "", 0});
  if (!bounds.cap_fits_one_activation) {
    const double cap = *checked_track(scenario).cap;
    throw CapUnreachable(
        "", 0, scenario.memory_model == MemoryModel::bytes ? "memory" : "K",
        fmt::format("no schedule fits {}: it is below one activation of some stage",
                    describe_cap(scenario, cap)));
  }
  Incumbent seed = best_known_schedule(scenario, form, cap_can_bind(scenario));
  const std::optional<CandidateTime> seed_time = evaluate(scenario, seed.schedule);
  // best_known_schedule keeps only schedules that replay within the cap.
  PPSIM_ASSERT(seed_time.has_value());

  SynthesisResult result;
  result.seed = seed.name;
  result.seed_makespan = seed.makespan;
  result.lower_bound = bounds.best_lower_bound;
  result.bound_name = best_bound_name(bounds);

  LocalSearch search(scenario, std::move(seed.schedule), *seed_time, options.seed);
  result.stop = SynthesisStop::evaluation_limit;
  while (search.evaluations() < options.max_evaluations) {
    if (search.time().makespan <= result.lower_bound) {
      result.stop = SynthesisStop::bound_met;
      break;
    }
    // The clock is read every 32 candidates: a candidate costs microseconds to milliseconds.
    if (search.evaluations() % 32 == 0 && elapsed() >= options.time_limit_seconds) {
      result.stop = SynthesisStop::time_limit;
      break;
    }
    search.step();
  }
  if (search.time().makespan <= result.lower_bound)
    result.stop = SynthesisStop::bound_met;
  result.schedule = search.schedule();
  result.makespan = search.time().makespan;
  result.evaluations = search.evaluations();
  result.improvements = search.improvements();

  const double time_left = options.time_limit_seconds - elapsed();
  if (result.stop != SynthesisStop::bound_met && exact_applies(scenario, options) &&
      time_left > 0) {
    ExactOptions exact_options;
    exact_options.time_limit_seconds = time_left;
    exact_options.max_start_variables = options.exact_max_start_variables;
    try {
      ExactResult exact = exact_optimum(scenario, form, exact_options);
      if (exact.lower_bound > result.lower_bound) {
        result.lower_bound = exact.lower_bound;
        result.bound_name = "exact";
      }
      if (exact.makespan < result.makespan) {
        result.schedule = std::move(exact.schedule);
        result.makespan = exact.makespan;
      }
      if (exact.proven_optimal && exact.makespan == result.makespan)
        result.stop = SynthesisStop::exact_optimum;
    } catch (const Error &) { // past the size guard: the local search's result stands
    }
    // Horizons the exact search ruled out can raise the bound to the makespan without its
    // finishing: the gap is then certified all the same.
    if (result.stop != SynthesisStop::exact_optimum && result.makespan <= result.lower_bound)
      result.stop = SynthesisStop::bound_met;
  }
  result.schedule.name = "synthesized";
  result.seconds = elapsed();
  return result;
}

} // namespace ppsim
