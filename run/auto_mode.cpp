#include "run/auto_mode.h"

#include "run/policy.h"

#include "base/parallel.h"

#include "run/prepare.h"

#include "base/error.h"
#include "sim/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace ppsim {
namespace {

// A schedule that already recomputes (full-remat) leaves no decision: it is replayed as is.
void replay_as_generated(const Scenario &scenario, const Schedule &base, const RematPlan &own,
                         AutoCandidate &candidate) {
  const MemoryTrack &track = capped_track(scenario);
  for (const double peak : device_peaks(scenario, base, track)) {
    candidate.peak = std::max(candidate.peak, peak);
  }
  if (over_cap(candidate.peak, *track.cap)) {
    candidate.status = "infeasible";
    candidate.note = fmt::format("schedule '{}' peaks at {} over {}", base.name,
                                 format_checked_amount(scenario, candidate.peak),
                                 describe_cap(scenario, *track.cap));
    return;
  }
  candidate.status = "as generated";
  RematSolution solution;
  solution.status = solver::Status::optimal;
  solution.plan = own;
  solution.schedule = base;
  solution.simulation = simulate(scenario, base);
  solution.objective = static_cast<double>(solution.simulation.metrics.max_span.count());
  solution.best_bound = solution.objective;
  candidate.solution = std::move(solution);
}

void solve_with_ilp(const Scenario &scenario, const Schedule &base, const IlpOptions &options,
                    AutoCandidate &candidate) {
  try {
    RematSolution solution = solve_stage_remat(scenario, base, options);
    candidate.status = solution.status_label();
    if (!solution.found()) {
      candidate.note = solution.failure;
      return;
    }
    for (const double peak : device_peaks(scenario, solution.schedule, capped_track(scenario))) {
      candidate.peak = std::max(candidate.peak, peak);
    }
    candidate.solution = std::move(solution);
  } catch (const CapUnreachable &error) {
    candidate.status = "infeasible";
    candidate.note = error.sentence();
  } catch (const Error &error) {
    candidate.status = "error";
    candidate.note = error.sentence();
  }
}

AutoCandidate solve_candidate(const ScenarioInput &input, const std::string &name,
                              const IlpOptions &options) {
  const auto start = std::chrono::steady_clock::now();
  AutoCandidate candidate{name, "", "", {}, std::nullopt, 0, 0};
  ScenarioInput with_schedule = input;
  with_schedule.schedule = name;
  with_schedule.schedule_file.clear();
  Schedule base;
  try {
    PreparedRun run = prepare_run(with_schedule); // reads the cost file as every command does
    candidate.scenario = scenario_with_checkpoint_levels(run.input, run.scenario);
    base = std::move(run.schedule);
  } catch (const Error &error) {
    candidate.status = "incompatible";
    candidate.note = error.sentence();
    return candidate;
  }
  const Scenario &scenario = candidate.scenario;
  const RematPlan own = plan_of(base, scenario.stage_count(), scenario.microbatches);
  if (own.recompute_count() > 0) {
    replay_as_generated(scenario, base, own, candidate);
  } else {
    solve_with_ilp(scenario, base, options, candidate);
  }
  candidate.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return candidate;
}

} // namespace

std::vector<std::string> default_auto_candidates() {
  std::vector<std::string> names;
  for (const ScheduleInfo &info : schedule_registry()) {
    if (info.auto_candidate)
      names.push_back(info.name);
  }
  return names;
}

std::vector<AutoCandidate> rank_schedules(const ScenarioInput &input,
                                          const std::vector<std::string> &candidates,
                                          const IlpOptions &options, int threads,
                                          const ProgressFn &progress) {
  std::vector<AutoCandidate> results(candidates.size());
  const int workers =
      std::clamp<int>(threads, 1, std::max<int>(1, static_cast<int>(candidates.size())));
  // The limit is the whole ranking's: each candidate gets its share of the workers' time.
  IlpOptions each = options;
  if (!candidates.empty())
    each.time_limit_seconds =
        options.time_limit_seconds * workers / static_cast<double>(candidates.size());
  std::atomic<std::size_t> next{0};
  ProgressCounter counter(progress, candidates.size());
  const auto work = [&]() {
    for (std::size_t k = next++; k < candidates.size(); k = next++) {
      results[k] = solve_candidate(input, candidates[k], each);
      counter.step_done(fmt::format("{}: {}", candidates[k], results[k].status));
    }
  };
  run_on_threads(static_cast<unsigned>(workers), work);

  std::vector<std::size_t> order(candidates.size());
  for (std::size_t k = 0; k < order.size(); ++k)
    order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const AutoCandidate &x = results[a];
    const AutoCandidate &y = results[b];
    if (x.solved() != y.solved())
      return x.solved();
    if (!x.solved())
      return false;
    // Each candidate has its own tick scale (chunks split the costs): compare in time units.
    const Rational span_x =
        x.scenario.time_scale.exact_units(x.solution->simulation.metrics.max_span);
    const Rational span_y =
        y.scenario.time_scale.exact_units(y.solution->simulation.metrics.max_span);
    if (span_x < span_y || span_y < span_x)
      return span_x < span_y;
    return x.solution->plan.recompute_count() < y.solution->plan.recompute_count();
  });
  std::vector<AutoCandidate> ranked;
  for (const std::size_t k : order)
    ranked.push_back(std::move(results[k]));
  return ranked;
}

} // namespace ppsim
