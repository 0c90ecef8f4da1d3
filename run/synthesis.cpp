// Schedule synthesis (docs/synthesis.md): seed, local search on the per-device orders, exact
// optimum on tiny instances, certified gap.
#include "run/synthesis.h"
#include "base/index.h"

#include "base/assert.h"
#include "base/error.h"
#include "base/parallel.h"
#include "bounds/analyzer.h"
#include "bounds/exact.h"
#include "bounds/incumbent.h"
#include "remat/baselines.h"
#include "remat/option_model.h"
#include "remat/stage_remat_ilp.h"
#include "run/policy.h"
#include "sim/io/report.h"
#include "sim/io/torch_csv.h"
#include "sim/metrics.h"
#include "sim/memory.h"
#include "sim/retime.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <optional>
#include <random>

namespace ppsim {
namespace {

bool stopped(const SynthesisOptions &options) {
  return options.stop != nullptr && options.stop->load();
}

using Clock = std::chrono::steady_clock;

/// Moves the `count` entries of `entries` that start at `start` so that they start at
/// `new_start`, shifting the entries between by `count`.
void move_block(std::vector<std::int32_t> &entries, int start, int count, int new_start) {
  const auto begin = entries.begin();
  if (start < new_start)
    std::rotate(begin + start, begin + start + count, begin + new_start + count);
  else
    std::rotate(begin + new_start, begin + start, begin + start + count);
}

/// True when `a` and `b` run ops of a common (stage, microbatch), whose order on their device is
/// fixed (F, R, B or BW, RW or RBW, W: docs/model.md, "Validation and exit codes").
bool share_activation(const Op &a, const Op &b) {
  for (int x = 0; x < a.sub_op_count(); ++x)
    for (int y = 0; y < b.sub_op_count(); ++y) {
      const OpRef first = a.sub_op(x), second = b.sub_op(y);
      if (first.stage == second.stage && first.microbatch == second.microbatch)
        return true;
    }
  return false;
}

/// A search and the known schedule it started from.
struct Seeded {
  std::string name;
  Ticks seed_makespan;
  OrderSearch search;
};

/// Seeds are the known schedules at most this much slower than the fastest, at most kMostSeeds.
constexpr double kSeedSlack = 1.1;
constexpr std::size_t kMostSeeds = 4;

/// The name of the largest makespan bound of `report` (the first one on ties).
std::string best_bound_name(const BoundsReport &report) {
  for (const NamedBound &bound : report.lower_bounds)
    if (bound.bounds_makespan && bound.value == report.best_lower_bound)
      return bound.name;
  return "none";
}

/// The exact optimum applies: count or zb memory, no contention or blocking sends, no
/// checkpoint levels (docs/bounds.md, "Exact optimum"), and the caller did not switch it off.
bool exact_applies(const Scenario &scenario, const SynthesisOptions &options) {
  const std::vector<StageMemory> &stages = scenario.activations.stages;
  return options.exact_max_start_variables > 0 && scenario.memory_model != MemoryModel::bytes &&
         !scenario.link.contention && !scenario.link.blocking &&
         std::all_of(stages.begin(), stages.end(),
                     [](const StageMemory &stage) { return stage.checkpoint_levels.empty(); });
}

/// (makespan, sum of the devices' last ends) of the re-timer's orders.
CandidateTime time_of(const Retimer &retimer, int devices) {
  Ticks total{0};
  for (int device = 0; device < devices; ++device) {
    const auto size = static_cast<int>(retimer.device_order(device).size());
    if (size > 0)
      total += retimer.end(device, size - 1);
  }
  return {retimer.makespan(), total};
}

/// One move in this many changes a recomputation, when the search has them (OrderSearch::step):
/// such a move re-times the whole schedule, an order move only what follows the move.
constexpr int kRecomputeMoveShare = 16;

/// The recomputation choice `choice` of a (stage, microbatch) whose stage has `levels`
/// checkpoint levels (docs/remat.md, "The three options" and "Checkpoint levels"): the forward
/// part is choice % (levels + 2), none, R of the whole stage or R of level 1 ... levels; the
/// backward part choice / (levels + 2), none, RW or RBW (with a split backward only).
RematDecision recomputation_choice(int choice, int levels) {
  const int forwards = levels + 2;
  const int forward = choice % forwards;
  RematDecision decision;
  decision.forward = forward == 0 ? ForwardRemat::none : ForwardRemat::full;
  decision.level = static_cast<std::uint8_t>(std::max(0, forward - 1));
  decision.backward = static_cast<BackwardRemat>(choice / forwards);
  return decision;
}

/// An exact optimum's schedule as the search's results are (docs/synthesis.md, "Recomputation"):
/// its recomputation put back right before the op it rebuilds for (the exact optimum may start an
/// R earlier) and re-timed. None when it recomputes and the search may not, or the placed
/// schedule does not fit.
std::optional<Incumbent> as_searched(const Scenario &scenario, const Schedule &schedule,
                                     bool recompute) {
  const RematPlan plan = plan_of(schedule, scenario.stage_count(), scenario.microbatches);
  if (plan.recompute_count() > 0 && !recompute)
    return std::nullopt;
  Schedule placed = apply_plan(without_recomputation(schedule), plan);
  const Simulation simulation = simulate(scenario, placed);
  if (!simulation.metrics.feasible)
    return std::nullopt;
  return Incumbent{"exact", std::move(placed), simulation.metrics.makespan};
}

/// Adds "WHAT at the LIMIT limit" to `cut_short` once, when a limit stopped it.
void note_cut_short(std::vector<std::string> &cut_short, std::string_view what,
                    solver::Limit limit) {
  if (limit == solver::Limit::none)
    return;
  std::string line = fmt::format("{} at the {}", what, solver::limit_name(limit));
  if (std::find(cut_short.begin(), cut_short.end(), line) == cut_short.end())
    cut_short.push_back(std::move(line));
}

/// The ILPs of the seeds run this many at a time (a CBC process each), whatever the machine, so
/// the seeds are the same wherever the time limits do not bind (as compare's batches).
constexpr std::size_t kIlpBatch = 2;

/// The registered schedules that do not fit the cap, each with full recomputation, with
/// measured selective recomputation (where the scenario has it as a level of every stage) and
/// with the remat ILP's plan (docs/synthesis.md, "Recomputation"), where that fits: what
/// `compare` ranks for the placement and backward form. A schedule identical to an earlier one
/// is planned once, one that recomputes already (full-remat) not at all.
/// The ILPs go fastest base first, kIlpBatch at a time; as in `compare`, a base no faster than
/// the best seed so far (or than `fastest_known`) gets no ILP, since recomputation only adds
/// work to its orders. The ILPs take at most half the time limit in all, shared evenly among
/// the batches of the bases still faster than every seed; under a node limit each takes what it
/// needs up to remat.time_limit.
std::vector<Incumbent> recomputing_seeds(const Scenario &scenario,
                                         const std::vector<RegisteredSchedule> &registered,
                                         std::optional<Ticks> fastest_known,
                                         const SynthesisOptions &options,
                                         std::vector<std::string> &cut_short) {
  const Clock::time_point start = Clock::now();
  std::vector<const Incumbent *> unfit;
  for (const RegisteredSchedule &candidate : registered)
    if (!candidate.fits && candidate.run.schedule.recompute_op_count() == 0 &&
        std::none_of(unfit.begin(), unfit.end(), [&](const Incumbent *earlier) {
          return earlier->schedule.device_ops == candidate.run.schedule.device_ops;
        }))
      unfit.push_back(&candidate.run);
  std::stable_sort(unfit.begin(), unfit.end(), [](const Incumbent *a, const Incumbent *b) {
    return a->makespan < b->makespan;
  });
  std::vector<Incumbent> seeds;
  const auto keep_if_fits = [&](const std::string &name, Schedule schedule) {
    const Simulation simulation = simulate(scenario, schedule);
    if (!simulation.metrics.feasible)
      return;
    if (!fastest_known || simulation.metrics.makespan < *fastest_known)
      fastest_known = simulation.metrics.makespan;
    seeds.push_back({name, std::move(schedule), simulation.metrics.makespan});
  };
  const std::optional<RematPlan> selective = selective_level_plan(scenario);
  for (const Incumbent *base : unfit) {
    keep_if_fits(base->name + " + full",
                 apply_plan(base->schedule, full_forward_plan(scenario, base->schedule)));
    if (selective)
      keep_if_fits(base->name + " + selective", apply_plan(base->schedule, *selective));
  }
  // Only bases faster than every seed so far get an ILP, so the time is shared among those
  // (a base the seeds already beat takes none of it); the seeds found on the way may drop more.
  const auto worth_planning = [&](const Incumbent *base) {
    return !fastest_known || base->makespan < *fastest_known;
  };
  for (;;) {
    std::erase_if(unfit, [&](const Incumbent *base) { return !worth_planning(base); });
    if (unfit.empty())
      break;
    const std::vector<const Incumbent *> batch(
        unfit.begin(), unfit.begin() + static_cast<std::ptrdiff_t>(
                                           std::min(kIlpBatch, unfit.size())));
    const double spent = std::chrono::duration<double>(Clock::now() - start).count();
    const auto batches_left = static_cast<double>((unfit.size() + kIlpBatch - 1) / kIlpBatch);
    unfit.erase(unfit.begin(), unfit.begin() + static_cast<std::ptrdiff_t>(batch.size()));
    IlpOptions ilp;
    // Under a node limit each ILP runs to it, as compare's does, with what is left of the time
    // limit as its guard: the seeds then do not depend on the machine's load.
    ilp.time_limit_seconds =
        std::min(options.remat_time_limit_seconds,
                 options.node_limit > 0 ? options.time_limit_seconds - spent
                                        : (options.time_limit_seconds / 2 - spent) / batches_left);
    ilp.relative_gap = options.remat_relative_gap;
    ilp.stop = options.stop;
    ilp.node_limit = options.node_limit;
    if (ilp.time_limit_seconds <= 0 || stopped(options))
      break;
    std::vector<std::optional<Schedule>> planned(batch.size());
    std::vector<solver::Limit> limits(batch.size(), solver::Limit::none);
    for_each_index(batch.size(), solver::concurrent_solves(kIlpBatch), [&](std::size_t i) {
      try {
        RematSolution solution = solve_stage_remat(scenario, batch[i]->schedule, ilp);
        limits[i] = solution.limit;
        if (solution.found())
          planned[i] = std::move(solution.schedule);
      } catch (const Error &) { // no plan of this schedule fits, or none within its time
      }
    });
    for (std::size_t i = 0; i < batch.size(); ++i) {
      note_cut_short(cut_short, "a seed's ILP", limits[i]);
      if (planned[i])
        keep_if_fits(batch[i]->name + " + ilp", std::move(*planned[i]));
    }
  }
  return seeds;
}

} // namespace

OrderSearch::OrderSearch(const Scenario &scenario, const Schedule &seed, std::uint64_t random_seed,
                         bool recompute)
    : scenario_(scenario), track_(checked_track(scenario)), recompute_(recompute),
      retimer_(scenario, seed), devices_(seed.device_count()), random_(random_seed) {
  for (int stage = 0; stage < scenario.stage_count(); ++stage)
    stage_levels_.push_back(recompute ? checkpoint_levels(scenario, track_, stage) : 0);
  adopt(seed, memory_effects(seed, OpLocator(seed, scenario.stage_count(), scenario.microbatches),
                             track_));
}

void OrderSearch::adopt(const Schedule &schedule, std::vector<MemoryEffect> effects) {
  effects_ = std::move(effects);
  ops_.clear();
  for (const std::vector<Op> &list : schedule.device_ops)
    ops_.insert(ops_.end(), list.begin(), list.end());
  time_ = current_time();
}

void OrderSearch::step() {
  if (recompute_ && std::uniform_int_distribution<int>(1, kRecomputeMoveShare)(random_) == 1) {
    const int stage = std::uniform_int_distribution<int>(0, scenario_.stage_count() - 1)(random_);
    const int microbatch =
        std::uniform_int_distribution<int>(0, scenario_.microbatches - 1)(random_);
    // RW and RBW need W apart from B (a DualPipe-V schedule fuses some backwards).
    const int levels = stage_levels_[at(stage)];
    const int choices = (levels + 2) * (has_weight_op(stage, microbatch) ? 3 : 1);
    const RematDecision decision = recomputation_choice(
        std::uniform_int_distribution<int>(0, choices - 1)(random_), levels);
    if (decision != decision_of(stage, microbatch))
      try_recompute(stage, microbatch, decision);
    return;
  }
  const int device = std::uniform_int_distribution<int>(0, devices_ - 1)(random_);
  const auto size = static_cast<int>(retimer_.device_order(device).size());
  PPSIM_ASSERT(size >= 2); // every device runs a forward and a backward of its stages
  const int from = std::uniform_int_distribution<int>(0, size - 1)(random_);
  const auto [start, count] = unit_at(device, from);
  if (count == size)
    return;
  // Half the moves are short (a swap with a neighbour or a few places), half reach anywhere on
  // the device (a W deferred into a far bubble, a forward pulled into the warm-up).
  const int reach =
      std::bernoulli_distribution(0.5)(random_) ? std::min(4, size - count) : size - count;
  int distance = std::uniform_int_distribution<int>(1, reach)(random_);
  if (std::bernoulli_distribution(0.5)(random_))
    distance = -distance;
  const int new_start = std::clamp(start + distance, 0, size - count);
  if (new_start != start)
    try_move(device, from, from + new_start - start);
}

MoveOutcome OrderSearch::try_move(int device, int from, int to) {
  ++evaluations_;
  const auto [start, count] = unit_at(device, from);
  const int new_start = start + to - from;
  PPSIM_ASSERT(new_start >= 0 &&
               new_start + count <= static_cast<int>(retimer_.device_order(device).size()));
  if (passes_own_activation(device, start, count, new_start))
    return MoveOutcome::fixed_order;
  if (lands_in_recomputation(device, start, count, new_start))
    return MoveOutcome::parts_recomputation;
  if (track_.cap && over_cap(candidate_peak(device, start, count, new_start), *track_.cap))
    return MoveOutcome::over_cap;
  if (!retimer_.move_block(device, start, count, new_start))
    return MoveOutcome::deadlock;
  const CandidateTime candidate = current_time();
  if (candidate > time_) {
    [[maybe_unused]] const bool restored = retimer_.move_block(device, new_start, count, start);
    PPSIM_ASSERT(restored); // the orders it restores ran
    return MoveOutcome::worse;
  }
  if (candidate < time_)
    ++improvements_;
  time_ = candidate;
  return MoveOutcome::kept;
}

MoveOutcome OrderSearch::try_recompute(int stage, int microbatch, const RematDecision &decision) {
  ++evaluations_;
  const Schedule candidate = with_decision(retimer_.schedule(), stage, microbatch, decision);
  const OpLocator locator(candidate, scenario_.stage_count(), scenario_.microbatches);
  std::vector<MemoryEffect> effects = memory_effects(candidate, locator, track_);
  if (track_.cap) {
    // Only the ops of (stage, microbatch) change their effects, all on its device.
    const int device = scenario_.stage_device[at(stage)];
    candidate_order_.resize(candidate.device_ops[at(device)].size());
    std::iota(candidate_order_.begin(), candidate_order_.end(), locator.entry_offset(device));
    if (over_cap(order_peak(candidate_order_, effects, track_, device), *track_.cap))
      return MoveOutcome::over_cap;
  }
  // R right before its B/BW and RW/RBW right before W follow what they wait for on the device,
  // so the orders run whenever the current ones do; the re-timer checks it all the same.
  std::optional<Retimer> retimer;
  try {
    retimer.emplace(scenario_, candidate, locator);
  } catch (const Error &) {
    return MoveOutcome::deadlock;
  }
  const CandidateTime time = time_of(*retimer, devices_);
  if (time > time_)
    return MoveOutcome::worse;
  if (time < time_)
    ++improvements_;
  retimer_ = std::move(*retimer);
  adopt(candidate, std::move(effects));
  return MoveOutcome::kept;
}

bool OrderSearch::has_weight_op(int stage, int microbatch) const {
  const std::span<const std::int32_t> order =
      retimer_.device_order(scenario_.stage_device[at(stage)]);
  return std::any_of(order.begin(), order.end(), [&](std::int32_t node) {
    const Op &op = ops_[at(node)];
    for (int part = 0; part < op.sub_op_count(); ++part) {
      const OpRef ref = op.sub_op(part);
      if (ref.kind == OpKind::backward_weight && ref.stage == stage &&
          ref.microbatch == microbatch)
        return true;
    }
    return false;
  });
}

RematDecision OrderSearch::decision_of(int stage, int microbatch) const {
  RematDecision decision;
  for (const std::int32_t node : retimer_.device_order(scenario_.stage_device[at(stage)])) {
    const OpRef &ref = ops_[at(node)].first;
    if (ref.stage == stage && ref.microbatch == microbatch)
      take_recomputation(decision, ref);
  }
  return decision;
}

bool OrderSearch::is_recompute_entry(int device, int position) const {
  const std::span<const std::int32_t> order = retimer_.device_order(device);
  return position >= 0 && position < static_cast<int>(order.size()) &&
         is_recompute(ops_[at(order[at(position)])].kind());
}

std::pair<int, int> OrderSearch::unit_at(int device, int position) const {
  if (is_recompute_entry(device, position))
    return {position, 2};
  if (is_recompute_entry(device, position - 1))
    return {position - 1, 2};
  return {position, 1};
}

bool OrderSearch::passes_own_activation(int device, int start, int count, int new_start) const {
  const std::span<const std::int32_t> order = retimer_.device_order(device);
  // The entries the unit passes: those it lands above, or below.
  const int first = new_start < start ? new_start : start + count;
  const int last = new_start < start ? start - 1 : new_start + count - 1;
  for (int unit = start; unit < start + count; ++unit)
    for (int k = first; k <= last; ++k)
      if (share_activation(ops_[at(order[at(unit)])], ops_[at(order[at(k)])]))
        return true;
  return false;
}

bool OrderSearch::lands_in_recomputation(int device, int start, int count, int new_start) const {
  // After the move the unit follows the entry now at `new_start - 1` (moving up) or at
  // `new_start + count - 1` (moving down); a recomputation there would be parted from its op.
  return is_recompute_entry(device, new_start < start ? new_start - 1 : new_start + count - 1);
}

double OrderSearch::candidate_peak(int device, int start, int count, int new_start) {
  const std::span<const std::int32_t> order = retimer_.device_order(device);
  candidate_order_.assign(order.begin(), order.end());
  move_block(candidate_order_, start, count, new_start);
  return order_peak(candidate_order_, effects_, track_, device);
}

CandidateTime OrderSearch::current_time() const { return time_of(retimer_, devices_); }

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
  case SynthesisStop::form_optimum:
    return "its form's optimum";
  }
  return "";
}

double SynthesisResult::gap() const { return gap_to_bound(makespan, lower_bound); }

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
  const char *cap_field = scenario.memory_model == MemoryModel::bytes ? "memory" : "K";
  const auto cap = [&] { return describe_cap(scenario, *checked_track(scenario).cap); };
  if (!bounds.cap_fits_one_activation)
    throw CapUnreachable(
        "", 0, cap_field,
        fmt::format("no schedule fits {}: it is below one activation of some stage", cap()));
  // Seeds (docs/synthesis.md, "The method"): the fastest known schedule and the others within
  // kSeedSlack of it, each with a search of its own; every known schedule replays (so passed
  // validation) within the cap.
  const bool recompute = options.recompute && cap_can_bind(scenario);
  std::vector<RegisteredSchedule> registered = registered_schedules(scenario, form);
  if (!options.recompute) // full-remat and allremat-1f1b recompute by construction
    std::erase_if(registered, [](const RegisteredSchedule &candidate) {
      return candidate.run.schedule.recompute_op_count() > 0;
    });
  std::vector<Incumbent> known = known_schedules(scenario, form, recompute, registered);
  std::vector<std::string> cut_short;
  if (recompute) {
    std::vector<Incumbent> planned = recomputing_seeds(
        scenario, registered,
        known.empty() ? std::nullopt : std::optional<Ticks>(known.front().makespan), options,
        cut_short);
    known.insert(known.end(), std::make_move_iterator(planned.begin()),
                 std::make_move_iterator(planned.end()));
    std::ranges::stable_sort(known, std::less{}, &Incumbent::makespan);
  }
  if (known.empty())
    throw CapUnreachable(
        "", 0, cap_field,
        fmt::format("no known schedule fits {} to start the search from: not the serial one (one "
                    "microbatch at a time{}), nor a registered schedule of this placement and "
                    "backward form{}",
                    cap(), recompute ? ", every stage recomputed" : "",
                    recompute ? " with full recomputation or the remat ILP's plan" : ""));
  std::vector<Seeded> searches;
  for (Incumbent &incumbent : known) {
    if (searches.size() == kMostSeeds ||
        static_cast<double>(incumbent.makespan.count()) >
            kSeedSlack * static_cast<double>(known.front().makespan.count()))
      break;
    searches.push_back(
        {incumbent.name, incumbent.makespan,
         OrderSearch(scenario, incumbent.schedule, options.seed + searches.size(), recompute)});
  }

  SynthesisResult result;
  result.cut_short = std::move(cut_short);
  result.best_known = known.front().name;
  result.best_known_makespan = known.front().makespan;
  result.lower_bound = bounds.best_lower_bound;
  result.bound_name = best_bound_name(bounds);
  if (scenario.memory_model == MemoryModel::bytes && checked_track(scenario).cap)
    result.bounds_note =
        fmt::format("the bounds know no byte budget: the gap includes what fitting {} costs",
                    cap());
  const auto fastest = [&]() -> Seeded & {
    return *std::min_element(
        searches.begin(), searches.end(),
        [](const Seeded &a, const Seeded &b) { return a.search.time() < b.search.time(); });
  };
  // Half the candidates race every seed in turn; the other half go to the fastest of them, which
  // stays the fastest since only it moves on.
  std::int64_t evaluations = 0;
  const std::int64_t racing = searches.size() > 1 ? options.max_evaluations / 2 : 0;
  Seeded *winner = nullptr;
  result.stop = SynthesisStop::evaluation_limit;
  for (std::size_t turn = 0; evaluations < options.max_evaluations; ++turn) {
    if (!winner && evaluations >= racing)
      winner = &fastest();
    OrderSearch &search = winner ? winner->search : searches[turn % searches.size()].search;
    if (search.time().makespan <= result.lower_bound) {
      result.stop = SynthesisStop::bound_met;
      break;
    }
    // The clock is read every 32 turns: a candidate costs microseconds to milliseconds.
    if (turn % 32 == 0 && (elapsed() >= options.time_limit_seconds || stopped(options))) {
      result.stop = SynthesisStop::time_limit;
      break;
    }
    const std::int64_t before = search.evaluations();
    search.step();
    evaluations += search.evaluations() - before;
  }
  if (!winner)
    winner = &fastest();
  if (winner->search.time().makespan <= result.lower_bound)
    result.stop = SynthesisStop::bound_met;
  result.seed = winner->name;
  result.seed_makespan = winner->seed_makespan;
  result.schedule = winner->search.schedule();
  result.makespan = winner->search.time().makespan;
  result.evaluations = evaluations;
  for (const Seeded &seeded : searches)
    result.improvements += seeded.search.improvements();

  const double time_left = options.time_limit_seconds - elapsed();
  if (result.stop != SynthesisStop::bound_met && exact_applies(scenario, options) &&
      time_left > 0 && !stopped(options)) {
    ExactOptions exact_options;
    exact_options.time_limit_seconds = time_left;
    exact_options.node_limit = options.node_limit;
    exact_options.max_start_variables = options.exact_max_start_variables;
    // The horizon is the synthesized makespan: the registered schedules were generated already.
    exact_options.incumbent = Incumbent{"synthesized", result.schedule, result.makespan};
    try {
      ExactResult exact = exact_optimum(scenario, form, exact_options);
      note_cut_short(result.cut_short, "the exact optimum", exact.limit);
      if (exact.lower_bound > result.lower_bound) {
        result.lower_bound = exact.lower_bound;
        result.bound_name = "exact";
      }
      if (exact.makespan < result.makespan) {
        // Its bound holds either way; its schedule counts only in the search's form.
        std::optional<Incumbent> placed = as_searched(scenario, exact.schedule, options.recompute);
        if (placed && placed->makespan < result.makespan) {
          result.schedule = std::move(placed->schedule);
          result.makespan = placed->makespan;
        }
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

void rank_searched_forms(std::vector<SearchedForm> &searched) {
  // Fastest first, in time units (each run has its own tick scale); ties keep the search order.
  const auto units = [](const SearchedForm &form, Ticks t) {
    return form.run.scenario.time_scale.exact_units(t);
  };
  std::stable_sort(searched.begin(), searched.end(),
                   [&](const SearchedForm &a, const SearchedForm &b) {
                     return units(a, a.result.makespan) < units(b, b.result.makespan);
                   });
  SearchedForm &best = searched.front();
  for (const SearchedForm &other : searched) {
    const Rational bound = units(other, other.form_lower_bound);
    if (!(bound < units(best, best.result.lower_bound)))
      continue;
    // The lower bound over every form searched, in the fastest run's ticks, rounded down so it
    // stays a bound.
    __extension__ using Int128 = __int128;
    const Int128 ticks = Int128{bound.numerator} *
                         best.run.scenario.time_scale.ticks_per_unit / bound.denominator;
    best.result.lower_bound = Ticks{static_cast<std::int64_t>(ticks)};
    best.result.bound_name = fmt::format("{} of the {} backward", other.form_bound_name,
                                         other.form == BackwardForm::full ? "full" : "split");
    if (best.result.stop == SynthesisStop::bound_met ||
        best.result.stop == SynthesisStop::exact_optimum)
      best.result.stop = SynthesisStop::form_optimum;
  }
}

std::vector<SearchedForm> synthesize_input(const RunInput &input,
                                           const SynthesisOptions &options) {
  refuse_chosen_recomputation(input, "synthesize", true);
  SynthesisOptions with_input = options;
  with_input.recompute = options.recompute && !input.origins.count("remat.policy");
  with_input.remat_time_limit_seconds = input.remat_time_limit_seconds;
  with_input.remat_relative_gap = input.remat_relative_gap;
  with_input.node_limit = input.remat_node_limit;
  const Clock::time_point start = Clock::now();
  std::vector<SearchedForm> searched;
  searched.reserve(2);
  searched.push_back({prepare_run(input), BackwardForm::full, {}, {}, {}});
  const PreparedRun &first = searched.front().run;
  searched.front().form = backward_form(first);
  const bool weights_given =
      std::any_of(first.scenario.stage_costs.begin(), first.scenario.stage_costs.end(),
                  [](const StageCosts &stage) { return stage.backward_weight.count() > 0; });
  if (searched.front().form == BackwardForm::full && weights_given &&
      !input.origins.count("pipeline.schedule") && input.schedule_file.empty()) {
    // 1f1b's single-wave placement with B and W apart, on the same split of the layers.
    RunInput split = input;
    split.schedule = "zb-h1";
    split.layers_per_stage = first.input.layers_per_stage;
    split.partition = "cost";
    try {
      searched.push_back({prepare_run(split), BackwardForm::split, {}, {}, {}});
    } catch (const Error &) {
      // The split form is an addition: a generator or split it refuses leaves the first form.
    }
  }
  // The levels `compare`'s plans may choose (measured selective recomputation, checkpoint
  // levels) where the search recomputes, that is where the cap can bind; the bounds and the
  // exact optimum see them too (docs/synthesis.md, "Recomputation"). Built either way, so that
  // levels asked for without a cost file are refused.
  for (SearchedForm &form : searched) {
    if (!with_input.recompute)
      break;
    Scenario leveled = scenario_with_remat_levels(form.run.input, form.run.scenario);
    if (cap_can_bind(form.run.scenario))
      form.run.scenario = std::move(leveled);
  }
  SynthesisOptions left = with_input;
  std::int64_t evaluations = 0, improvements = 0;
  for (std::size_t k = 0; k < searched.size(); ++k) {
    SynthesisOptions mine = left;
    if (k + 1 < searched.size()) {
      mine.max_evaluations = left.max_evaluations / 2;
      mine.time_limit_seconds = left.time_limit_seconds / 2;
    }
    SearchedForm &form = searched[k];
    form.result = synthesize(form.run.scenario, form.form, mine);
    form.form_lower_bound = form.result.lower_bound;
    form.form_bound_name = form.result.bound_name;
    left.max_evaluations -= form.result.evaluations;
    evaluations += form.result.evaluations;
    improvements += form.result.improvements;
    left.time_limit_seconds = std::max(
        0.0, options.time_limit_seconds -
                 std::chrono::duration<double>(Clock::now() - start).count());
  }
  rank_searched_forms(searched);
  SearchedForm &best = searched.front();
  best.result.evaluations = evaluations;
  best.result.improvements = improvements;
  best.result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return searched;
}

ExactResult seeded_exact_optimum(const Scenario &scenario, BackwardForm form, ExactOptions options,
                                 std::int64_t search_evaluations) {
  // What the search cannot take (the byte model, an overlapped F&B) goes straight to the exact
  // optimum, which refuses both in one line.
  options.incumbent.reset();
  if (scenario.memory_model == MemoryModel::bytes || scenario.overlap_duration)
    return exact_optimum(scenario, form, options);
  SynthesisOptions search;
  search.max_evaluations = search_evaluations;
  search.node_limit = options.node_limit;
  search.time_limit_seconds = options.time_limit_seconds / 2; // a guard: the work limit decides
  search.exact_max_start_variables = 0;
  const SynthesisResult found = synthesize(scenario, form, search);
  options.incumbent = Incumbent{found.makespan < found.best_known_makespan
                                    ? fmt::format("synthesized from {}", found.seed)
                                    : found.best_known,
                                found.schedule, found.makespan};
  options.time_limit_seconds = std::max(options.time_limit_seconds - found.seconds, 1e-3);
  return exact_optimum(scenario, form, options);
}

SynthesisFiles synthesis_files(const Scenario &scenario, const Schedule &schedule) {
  const RematPlan plan = plan_of(schedule, scenario.stage_count(), scenario.microbatches);
  return {write_torch_csv(scenario, without_recomputation(schedule)).text,
          format_plan_csv(plan, scenario.selective_levels())};
}

std::string synthesis_json(const std::vector<SearchedForm> &searched,
                           const std::string &simulation_json) {
  const SynthesisResult &result = searched.front().result;
  const TimeScale &scale = searched.front().run.scenario.time_scale;
  std::vector<std::string> forms;
  for (const SearchedForm &form : searched) {
    const TimeScale &own = form.run.scenario.time_scale;
    forms.push_back(fmt::format(
        "{{\"schedule\": {}, \"backward\": {}, \"makespan\": {}, \"best_lower_bound\": {}}}",
        json_string(form.run.input.schedule),
        json_string(form.form == BackwardForm::full ? "full" : "split"),
        own.json(form.result.makespan), own.json(form.form_lower_bound)));
  }
  std::vector<std::string> cut_short;
  for (const std::string &limit : result.cut_short)
    cut_short.push_back(json_string(limit));
  return fmt::format(
      "{{\"makespan\": {}, \"best_lower_bound\": {}, \"bound\": {}, \"gap\": {}, "
      "\"seed\": {}, \"seed_makespan\": {}, \"best_known\": {}, \"best_known_makespan\": {}, "
      "\"improvements\": {}, \"evaluations\": {}, \"stopped\": {}, \"cut_short\": [{}], "
      "\"seconds\": {}, \"bounds_note\": {}, \"searched\": [{}], \"simulation\": {}}}\n",
      scale.json(result.makespan), scale.json(result.lower_bound), json_string(result.bound_name),
      json_number(result.gap()), json_string(result.seed), scale.json(result.seed_makespan),
      json_string(result.best_known), scale.json(result.best_known_makespan), result.improvements,
      result.evaluations, json_string(std::string(describe(result.stop))),
      fmt::join(cut_short, ", "),
      json_number(result.seconds), json_string(result.bounds_note), fmt::join(forms, ", "),
      simulation_json);
}

} // namespace ppsim
