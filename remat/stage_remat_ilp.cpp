#include "remat/stage_remat_ilp.h"
#include "base/index.h"

#include "base/error.h"
#include "remat/baselines.h"
#include "remat/option_model.h"
#include "sim/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace ppsim {

namespace {

using Clock = std::chrono::steady_clock;

// Which levels a greedy start may use.
enum class StartLevels { all, rotor, selective, none };

// The scenario with only some levels per stage (StartLevels), renumbered from 1, so that the
// greedy finds the starts those options give on their own.
Scenario fewer_levels(Scenario scenario, StartLevels kept) {
  const std::vector<int> selective = scenario.selective_levels();
  for (std::size_t s = 0; s < scenario.stage_costs.size(); ++s) {
    const auto keep = [&](auto &levels) {
      std::decay_t<decltype(levels)> chosen;
      for (std::size_t k = 0; k < levels.size(); ++k) {
        const bool is_selective = static_cast<int>(k) + 1 == selective[s];
        if ((kept == StartLevels::rotor && !is_selective) ||
            (kept == StartLevels::selective && is_selective))
          chosen.push_back(levels[k]);
      }
      levels = std::move(chosen);
    };
    keep(scenario.stage_costs[s].checkpoint_level_recompute);
    keep(scenario.activations.stages[s].checkpoint_levels);
    if (scenario.bytes)
      keep(scenario.bytes->stages[s].checkpoint_levels);
  }
  return scenario;
}

// The greedy plans (both tie rules) on fewer_levels(scenario, kept), in the levels of
// `scenario` (the rotor's come first and keep their numbers; selective alone is level 1 there).
std::vector<RematPlan> greedy_starts(const Scenario &scenario, const Schedule &base,
                                     StartLevels kept) {
  if (kept == StartLevels::all)
    return greedy_plans(scenario, base);
  std::vector<RematPlan> plans = greedy_plans(fewer_levels(scenario, kept), base);
  const std::vector<int> selective = scenario.selective_levels();
  for (RematPlan &plan : plans) {
    for (int s = 0; kept == StartLevels::selective && s < plan.stages(); ++s) {
      for (int j = 0; j < plan.microbatches(); ++j) {
        RematDecision &d = plan.at(s, j);
        if (d.level == 1)
          d.level = static_cast<std::uint8_t>(selective[at(s)]);
      }
    }
  }
  return plans;
}

double seconds_left(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

// The values of `model`'s option variables that encode `plan` (its time variables are left to
// the solver, which completes a start by one LP).
std::vector<double> start_values(const StageRematModel &model, const RematPlan &plan, int stages,
                                 int microbatches) {
  std::vector<double> values(model.model.variables.size(), 0.0);
  for (int s = 0; s < stages; ++s) {
    for (int j = 0; j < microbatches; ++j) {
      for (int c = 0; c < kChoiceCount; ++c) {
        const int variable = model.option_variable[at(option_key(s, j, microbatches, c))];
        if (variable >= 0)
          values[at(variable)] = takes(plan.at(s, j), c) ? 1 : 0;
      }
    }
  }
  return values;
}

// The least peak any plan reaches (in the form's accounting) and a plan reaching it; throws the
// "cannot fit" error when even that is over the cap.
RematPlan least_peak_plan(const Scenario &scenario, const Schedule &base, IlpForm form,
                          Clock::time_point deadline, std::int64_t node_limit) {
  const MemoryTrack &track = capped_track(scenario);
  const double cap = *track.cap;
  const std::optional<StageRematModel> model =
      build_stage_remat_model_until(scenario, base, form, true, deadline);
  if (!model) {
    throw Error(fmt::format("no remat plan of schedule '{}' under {} found within the time limit "
                            "(it ended while building the least-peak ILP)",
                            base.name, describe_cap(scenario, cap)));
  }
  solver::Options least_options{std::max(0.0, seconds_left(deadline)), 0, false};
  least_options.preprocess = false; // as for the main model: its rows are tight at the optimum
  least_options.node_limit = node_limit;
  const solver::MilpSolution least = solver::solve(model->model, least_options);
  const auto cannot_fit = [&](const std::string &least_text) {
    return CapUnreachable(
        fmt::format("cannot fit schedule '{}' within {}; the least peak any remat "
                    "plan reaches is {}",
                    base.name, describe_cap(scenario, cap), least_text));
  };
  if (least.status == solver::Status::failed)
    throw Error(fmt::format("the ILP solver failed: {}", least.failure));
  const double allowed = cap_with_tolerance(cap) / cap; // the engine's own test, in caps
  if (least.status == solver::Status::optimal && least.objective > allowed)
    throw cannot_fit(format_checked_amount(scenario, least.objective * cap));
  if (!least.has_solution() || least.objective > allowed) {
    if (least.best_bound > allowed)
      throw cannot_fit(
          fmt::format("at least {}", format_checked_amount(scenario, least.best_bound * cap)));
    throw Error(fmt::format("no remat plan of schedule '{}' under {} found within the {}",
                            base.name, describe_cap(scenario, cap),
                            solver::limit_name(least.limit)));
  }
  return model->plan_from(least.values, scenario.stage_count(), scenario.microbatches);
}

} // namespace

std::string RematSolution::status_label() const {
  if (!found())
    return solver::status_name(status);
  if (!(objective > best_bound * (1 + 1e-9)) || best_bound <= 0)
    return status == solver::Status::optimal ? "optimal" : solver::status_name(status);
  return fmt::format("gap {:.2f}%", 100 * (objective / best_bound - 1));
}

RematSolution solve_stage_remat(const Scenario &given_scenario, const Schedule &given_base,
                                const IlpOptions &options) {
  const auto began = Clock::now();
  const auto deadline =
      began + std::chrono::duration_cast<Clock::duration>(
                  std::chrono::duration<double>(std::clamp(options.time_limit_seconds, 0.0, 1e7)));
  const FormInstance instance = form_instance(given_scenario, given_base, options.form);
  const Scenario &scenario = instance.scenario;
  const Schedule &base = instance.base;
  // A plan that fits, to start the search from: the greedy one (linear, so it is there even
  // when the limit ends while the model is built), else the least-peak one (which also decides
  // that no plan fits). The reference's accounting decides for itself.
  std::optional<RematPlan> start;
  if (options.form == IlpForm::ppsim) {
    // With checkpoint levels the greedy may take a deep level early; its plans with only the
    // rotor's levels, only the selective one, or none are starts too. So are full and
    // selective recomputation where they fit: the plan is then never slower than those uniform
    // policies, whatever the limit leaves of the search. The fastest start is kept.
    std::optional<Ticks> start_span;
    const auto consider = [&](const std::optional<RematPlan> &plan) {
      if (!plan || plan == start)
        return;
      const Simulation replay = simulate(scenario, apply_plan(base, *plan));
      if (replay.metrics.feasible &&
          (!start_span || replayed_objective(replay.metrics) < *start_span)) {
        start = plan;
        start_span = replayed_objective(replay.metrics);
      }
    };
    const bool selective = scenario.has_selective_level(); // else rotor = all, selective = none
    for (const StartLevels levels :
         {StartLevels::all, StartLevels::rotor, StartLevels::selective, StartLevels::none}) {
      if (selective || levels == StartLevels::all || levels == StartLevels::none)
        for (const RematPlan &plan : greedy_starts(scenario, base, levels))
          consider(plan);
    }
    consider(full_forward_plan(scenario, base));
    consider(selective_level_plan(scenario));
  }
  // Recomputation only lengthens ops, so no plan beats the base schedule's own spans on
  // independent links (which contention and blocking sends only lengthen in turn).
  const auto base_span = [&] {
    Scenario independent = scenario;
    independent.link = LinkModel{};
    return static_cast<double>(replayed_objective(simulate(independent, base).metrics).count());
  };
  const bool relaxed_links = scenario.link.contention || scenario.link.blocking;
  const auto finish = [&](RematSolution solution) {
    if (solution.found()) {
      solution.schedule = apply_plan(base, solution.plan);
      solution.simulation = simulate(scenario, solution.schedule);
      // With contention or blocking sends the model's objective is that of independent links,
      // which only lower the spans: the replay's span is the plan's, the bound stays a bound.
      // The start, chosen by its replay on the real links, may then beat the solver's plan.
      if (solution.from_start || relaxed_links)
        solution.objective =
            static_cast<double>(replayed_objective(solution.simulation.metrics).count());
      if (relaxed_links && start && solution.plan != *start) {
        Schedule kept = apply_plan(base, *start);
        Simulation replay = simulate(scenario, kept);
        const auto kept_objective = static_cast<double>(replayed_objective(replay.metrics).count());
        if (replay.metrics.feasible && kept_objective < solution.objective) {
          solution.plan = *start;
          solution.schedule = std::move(kept);
          solution.simulation = std::move(replay);
          solution.objective = kept_objective;
        }
      }
    }
    solution.seconds = std::chrono::duration<double>(Clock::now() - began).count();
    return solution;
  };

  // The time limit bounds the whole call, building included (docs/remat.md).
  const std::optional<StageRematModel> model =
      build_stage_remat_model_until(scenario, base, options.form, false, deadline);
  if (!model) {
    RematSolution solution;
    if (start) {
      solution.status = solver::Status::feasible;
      solution.plan = *start;
      solution.from_start = true;
      solution.best_bound = base_span();
      solution.limit = solver::Limit::time;
    } else {
      solution.failure = "no plan: the time limit ended while the ILP was being built";
    }
    return finish(std::move(solution));
  }
  const StageRematModel &built = *model;
  if (options.form == IlpForm::ppsim && !start)
    start = least_peak_plan(scenario, base, options.form, deadline, options.node_limit);
  solver::Options solve_options{std::max(0.0, seconds_left(deadline)), options.relative_gap, false};
  solve_options.preprocess = false;
  solve_options.stop = options.stop;
  solve_options.node_limit = options.node_limit;
  if (start)
    solve_options.start =
        start_values(built, *start, scenario.stage_count(), scenario.microbatches);
  const solver::MilpSolution solved = solver::solve(built.model, solve_options);
  if (solved.status == solver::Status::infeasible && !start) {
    least_peak_plan(scenario, base, options.form, deadline + std::chrono::seconds(10),
                    options.node_limit);
    throw Error(fmt::format("the ILP found no plan of schedule '{}' within {}", base.name,
                            describe_cap(scenario, *capped_track(scenario).cap)));
  }
  RematSolution solution;
  solution.status = solved.status;
  solution.limit = solved.limit;
  solution.first_ops_pinned = built.first_ops_pinned;
  const double unit = built.ticks_per_time_unit;
  if (solved.has_solution()) {
    solution.plan = built.plan_from(solved.values, scenario.stage_count(), scenario.microbatches);
    solution.objective = solved.objective * unit;
    solution.best_bound = solved.best_bound * unit;
  } else if (start && solved.status != solver::Status::failed) {
    // The limit ended the search before the solver reported: the start is the best plan known,
    // and no plan beats the base schedule's spans nor the busiest device's work.
    solution.status = solver::Status::feasible;
    solution.plan = *start;
    solution.from_start = true;
    solution.best_bound =
        std::max(built.model.variables[at(built.span_variable)].lower * unit, base_span());
  } else {
    solution.failure =
        solved.status == solver::Status::failed
            ? fmt::format("the ILP solver failed: {}", solved.failure)
        : solved.limit == solver::Limit::nodes
            ? fmt::format("no plan within the node limit of {} nodes", options.node_limit)
            : fmt::format("no plan within the time limit of {} s", options.time_limit_seconds);
  }
  return finish(std::move(solution));
}

} // namespace ppsim
