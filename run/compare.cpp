#include "run/compare.h"

#include "base/decimal.h"
#include "base/error.h"
#include "base/parallel.h"
#include "sim/io/report.h"
#include "sim/schedules/registry.h"
#include "solver/milp.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>
#include <sstream>

namespace ppsim {
namespace {

// The recomputing runs evaluated at once, in a fixed order: the pruning below depends on which
// runs were done before, so it must not depend on the thread count. Four keep two threads busy
// when one run of a batch ends early (an ILP that meets its gap, a policy that cannot apply).
constexpr std::size_t kBatch = 4;

std::size_t recomputing_count(const std::vector<std::string> &policies) {
  return static_cast<std::size_t>(
      std::count_if(policies.begin(), policies.end(),
                    [](const std::string &policy) { return policy != "none"; }));
}

// Fastest first: runs that fit, then runs over the cap, then unavailable ones.
bool ranks_before(const RankedRun &a, const RankedRun &b) {
  if (a.ran() != b.ran())
    return a.ran();
  if (!a.ran())
    return false;
  if (a.fits() != b.fits())
    return a.fits();
  // By iteration where it ends one, ties by makespan.
  const std::pair ranked_a{a.evaluation->ranked_time(), a.evaluation->makespan()};
  const std::pair ranked_b{b.evaluation->ranked_time(), b.evaluation->makespan()};
  return ranked_a < ranked_b;
}

RankedRun plain_run(const RankRequest &request, const std::string &schedule,
                    const std::optional<double> &cap) {
  RunInput input = request.base;
  input.schedule = schedule;
  input.schedule_file.clear();
  input.remat_policy = "none";
  input.cap_activations = cap;
  RankedRun run{schedule, "none", std::nullopt, ""};
  try {
    run.evaluation = evaluate_run(input, request.evaluate);
  } catch (const Error &error) {
    run.unavailable = error.sentence();
  }
  return run;
}

RankedRun recomputing_run(const RankRequest &request, const RankedRun &without,
                          const std::string &policy) {
  RankedRun run{without.schedule, policy, std::nullopt, ""};
  try {
    run.evaluation = evaluate_policy(without.evaluation->run, policy, request.evaluate);
  } catch (const Error &error) {
    run.unavailable = error.sentence();
  }
  return run;
}

// All runs of one cap. A schedule that fits without recomputation gains nothing from a policy
// (recomputation only adds work to a fixed order), and one whose makespan (or iteration, with
// the iteration's end) without it is already at or above the best run found cannot win with
// one: neither is evaluated.
Ranking rank_cap(const RankRequest &request, const std::optional<double> &cap,
                 ProgressCounter &progress) {
  const std::vector<std::string> &names = request.schedules;
  const std::vector<std::string> &policies = request.policies;
  Ranking ranking;
  ranking.cap = cap;
  std::vector<RankedRun> plain(names.size());
  for_each_index(names.size(), request.threads,
                 [&](std::size_t k) { plain[k] = plain_run(request, names[k], cap); });
  std::vector<const RankedRun *> candidates; // runs over the cap, fastest first
  for (const RankedRun &run : plain) {
    if (run.ran() && !run.fits())
      candidates.push_back(&run);
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const RankedRun *a, const RankedRun *b) { return ranks_before(*a, *b); });
  std::optional<Rational> best; // in time units: each schedule has its own tick scale
  const auto consider = [&](RankedRun run) {
    if (run.fits() && (!best || run.evaluation->ranked_time() < *best))
      best = run.evaluation->ranked_time();
    ranking.runs.push_back(std::move(run));
  };
  const bool with_none = std::find(policies.begin(), policies.end(), "none") != policies.end();
  for (const RankedRun &run : plain) {
    if (with_none || !run.ran() || run.fits())
      consider(run);
  }
  const std::string label = cap_label(request.base, cap);
  progress.steps_done((names.size() - candidates.size()) * recomputing_count(policies),
                      fmt::format("{}: {} schedules fit as they are or cannot run", label,
                                  names.size() - candidates.size()));
  for (const std::string &policy : policies) {
    if (policy == "none")
      continue;
    std::size_t not_tried = 0;
    for (std::size_t k = 0; k < candidates.size(); k += kBatch) {
      std::vector<const RankedRun *> batch;
      for (std::size_t i = k; i < std::min(k + kBatch, candidates.size()); ++i) {
        if (best && !(candidates[i]->evaluation->ranked_time() < *best)) {
          ++not_tried;
          ranking.not_tried.push_back(candidates[i]->schedule + " + " + policy);
          continue;
        }
        batch.push_back(candidates[i]);
      }
      std::vector<RankedRun> done(batch.size());
      for_each_index(batch.size(), solver::concurrent_solves(request.threads),
                     [&](std::size_t i) {
        done[i] = recomputing_run(request, *batch[i], policy);
        progress.step_done(fmt::format("{} + {}, {}", batch[i]->schedule, policy, label));
      });
      for (RankedRun &run : done)
        consider(std::move(run));
    }
    progress.steps_done(not_tried,
                        fmt::format("{}, {}: {} schedules not tried", policy, label, not_tried));
  }
  std::stable_sort(ranking.runs.begin(), ranking.runs.end(), ranks_before);
  return ranking;
}

} // namespace

const RankedRun *Ranking::winner() const {
  const auto found =
      std::find_if(runs.begin(), runs.end(), [](const RankedRun &run) { return run.fits(); });
  return found == runs.end() ? nullptr : &*found;
}

std::vector<const RankedRun *> Ranking::best_per_schedule() const {
  std::vector<const RankedRun *> best;
  std::set<std::string> seen;
  for (const RankedRun &run : runs) {
    if (seen.insert(run.schedule).second)
      best.push_back(&run);
  }
  return best;
}

std::vector<std::string> split_names(const std::string &text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty())
      items.push_back(item);
  }
  return items;
}

std::vector<std::string> all_schedules() {
  std::vector<std::string> names;
  for (const ScheduleInfo &info : schedule_registry())
    names.push_back(info.name);
  return names;
}

std::vector<std::string> default_policies(const RunInput &base, bool capped) {
  if (base.origins.count("remat.policy"))
    return split_names(base.remat_policy);
  if (!capped)
    return {"none"};
  if (base.costs_files.empty())
    return {"none", "full", "ilp"};
  return {"none", "full", "selective", "ilp"};
}

RankRequest rank_request(const RunInput &base, std::vector<std::string> schedules,
                         std::optional<std::vector<std::optional<double>>> caps) {
  RankRequest request;
  request.base = base;
  request.schedules = schedules.empty() ? all_schedules() : std::move(schedules);
  request.caps = caps ? std::move(*caps) : std::vector{base.cap_activations};
  const bool capped =
      base.budget_bytes || std::any_of(request.caps.begin(), request.caps.end(),
                                       [](const auto &cap) { return cap.has_value(); });
  request.policies = default_policies(base, capped);
  return request;
}

bool cap_of_budget(const RunInput &base, const std::optional<double> &cap) {
  return base.memory_model != MemoryModel::bytes && base.budget_bytes && !cap;
}

std::string cap_label(const RunInput &base, const std::optional<double> &cap) {
  if (base.memory_model == MemoryModel::bytes && base.budget_bytes)
    return "budget " + format_bytes(*base.budget_bytes);
  if (cap_of_budget(base, cap))
    return "K of " + format_bytes(*base.budget_bytes);
  return "K = " + (cap ? format_readable(*cap) : std::string("none"));
}

std::size_t rank_steps(const RankRequest &request) {
  return std::max<std::size_t>(1, request.microbatch_sizes.size()) * request.caps.size() *
         request.schedules.size() * recomputing_count(request.policies);
}

std::vector<Ranking> rank_runs(const RankRequest &request, const ProgressFn &progress) {
  ProgressCounter counter(progress, rank_steps(request));
  std::vector<Ranking> rankings;
  if (request.microbatch_sizes.empty()) {
    for (const std::optional<double> &cap : request.caps)
      rankings.push_back(rank_cap(request, cap, counter));
    return rankings;
  }
  check_microbatch_sizes(request);
  for (const int size : request.microbatch_sizes) {
    RankRequest sized = request;
    sized.base = at_microbatch_size(request.base, size, request.sizes_origin);
    load_cost_file(sized.base); // the costs at this size, read once for its runs
    for (const std::optional<double> &cap : request.caps) {
      Ranking ranking = rank_cap(sized, cap, counter);
      ranking.microbatch_size = size;
      ranking.microbatches = sized.base.microbatches;
      rankings.push_back(std::move(ranking));
    }
  }
  return rankings;
}

namespace {

// A refusal of the microbatch sizes, at the option or field that gave them.
[[noreturn]] void refuse_sizes(const SourceLocation &where, const std::string &sentence) {
  throw Error(where.file, where.line, where.field, sentence);
}

// The fields that give one microbatch's costs in the scenario itself, ahead of the cost file.
bool per_microbatch_cost(const std::string &field) {
  static const std::set<std::string> times{"model.F",  "model.B",   "model.W",
                                           "model.R",  "model.RW",  "model.RBW",
                                           "model.R_selective"};
  return times.count(field) > 0 || field.starts_with("model.memory.");
}

} // namespace

RunInput at_microbatch_size(const RunInput &base, int size, const SourceLocation &sizes_origin) {
  // The run's own size: the scenario's, else the one its cost file records.
  std::int64_t own = base.microbatch_size;
  if (own <= 0) {
    if (const std::shared_ptr<const CostFile> costs = run_costs(base))
      own = costs->metadata.b;
  }
  if (own <= 0 || own > kLargestCount) {
    base.fail("pipeline.microbatch_size",
              own <= 0 ? "ranking microbatch sizes keeps the batch of m x b samples: give the "
                         "run's size b and cost files at the sizes ranked (model.costs_file)"
                       : fmt::format("the cost file records microbatch size {}, more than ppsim "
                                     "runs",
                                     own));
  }
  const std::int64_t samples = std::int64_t{base.microbatches} * own;
  if (size <= 0)
    refuse_sizes(sizes_origin, fmt::format("expected microbatch sizes >= 1, got {}", size));
  if (samples % size != 0) {
    refuse_sizes(sizes_origin,
                 fmt::format("a batch of m x b = {} x {} = {} samples is not a whole number of "
                             "microbatches of size {}",
                             base.microbatches, own, samples, size));
  }
  if (samples / size > kLargestCount) {
    refuse_sizes(sizes_origin,
                 fmt::format("microbatch size {} gives m = {} microbatches for the batch of {} "
                             "samples, more than ppsim runs",
                             size, samples / size, samples));
  }
  RunInput sized = base;
  sized.microbatch_size = size;
  sized.microbatches = static_cast<int>(samples / size);
  sized.origins["pipeline.microbatch_size"] = sizes_origin;
  return sized;
}

std::vector<const RankedRun *> pooled_ranking(const std::vector<Ranking> &rankings) {
  std::vector<const RankedRun *> pooled;
  for (const Ranking &ranking : rankings) {
    for (const RankedRun &run : ranking.runs)
      pooled.push_back(&run);
  }
  std::stable_sort(pooled.begin(), pooled.end(),
                   [](const RankedRun *a, const RankedRun *b) { return ranks_before(*a, *b); });
  return pooled;
}

void check_microbatch_sizes(const RankRequest &request) {
  const RunInput &base = request.base;
  const std::vector<int> &sizes = request.microbatch_sizes;
  const bool capped_in_microbatches =
      base.cap_activations ||
      std::any_of(request.caps.begin(), request.caps.end(),
                  [](const std::optional<double> &cap) { return cap.has_value(); });
  const SourceLocation &where = request.sizes_origin;
  if (capped_in_microbatches) {
    refuse_sizes(where, "ranking microbatch sizes needs the memory as a byte budget "
                        "(cluster.memory): a cap K counts microbatches, each of b samples, so "
                        "it is not one memory across sizes");
  }
  for (const auto &[field, where] : base.origins) {
    if (per_microbatch_cost(field)) {
      base.fail(field, "is one microbatch's cost at one size: ranking microbatch sizes reads "
                       "every cost from the cost files at each size");
    }
  }
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    if (std::find(sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(k), sizes[k]) !=
        sizes.begin() + static_cast<std::ptrdiff_t>(k))
      refuse_sizes(where, fmt::format("microbatch size {} is given twice", sizes[k]));
    run_costs(at_microbatch_size(base, sizes[k], where)); // the files read at that size
  }
}

std::string ranking_heading(const RunInput &base, const Ranking &ranking) {
  const std::string cap = cap_heading(base, ranking.cap);
  if (ranking.microbatch_size == 0)
    return cap;
  return fmt::format("{}, microbatch size {} (m = {})", cap, ranking.microbatch_size,
                     ranking.microbatches);
}

std::string cap_heading(const RunInput &base, const std::optional<double> &cap) {
  if (cap_of_budget(base, cap)) {
    return fmt::format("memory cap K of the {} budget per schedule, in the {} model (memory_model "
                       "= \"bytes\" checks bytes)",
                       format_bytes(*base.budget_bytes), memory_model_name(base.memory_model));
  }
  const std::string label = cap_label(base, cap);
  return label.starts_with("K = ") ? "memory cap " + label : label;
}

namespace {

// A JSON object without the newline that ends a command's output.
std::string trimmed(std::string text) {
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  return text;
}

} // namespace

std::string rankings_json(const std::vector<Ranking> &rankings) {
  std::vector<std::string> objects;
  for (const Ranking &ranking : rankings) {
    const RankedRun *winner = ranking.winner();
    std::vector<std::string> runs, not_tried;
    for (const RankedRun &run : ranking.runs) {
      runs.push_back(fmt::format(
          "{{\"schedule\": {}, \"policy\": {}, \"winner\": {}, \"unavailable\": {}, "
          "\"report\": {}}}",
          json_string(run.schedule), json_string(run.policy), &run == winner ? "true" : "false",
          run.ran() ? "null" : json_string(run.unavailable),
          run.ran() ? trimmed(report_json(run.evaluation->report())) : "null"));
    }
    for (const std::string &pair : ranking.not_tried)
      not_tried.push_back(json_string(pair));
    objects.push_back(fmt::format(
        "{{\"cap\": {}, \"microbatch_size\": {}, \"winner\": {}, \"not_tried\": [{}], "
        "\"runs\": [{}]}}",
        ranking.cap ? json_number(*ranking.cap) : "null",
        ranking.microbatch_size > 0 ? std::to_string(ranking.microbatch_size) : "null",
        winner ? fmt::format("{{\"schedule\": {}, \"policy\": {}}}", json_string(winner->schedule),
                             json_string(winner->policy))
               : "null",
        fmt::join(not_tried, ", "), fmt::join(runs, ", ")));
  }
  return fmt::format("{{\"rankings\": [{}]}}\n", fmt::join(objects, ", "));
}

} // namespace ppsim
