// `ppsim remat`: for a cap (--K or --memory), the optimal forward/backward recomputation of
// the StageRemat ILP beside the baselines (docs/remat.md, "The ILP (ppsim form)" and "Simple
// policies"), or with --auto the ranking `ppsim compare` makes (run/compare.h), one row per
// schedule (docs/remat.md, "--auto").
#include "base/index.h"
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/progress.h"
#include "run/report_page.h"
#include "cli/scenario_options.h"

#include "base/error.h"
#include "remat/baselines.h"
#include "remat/stage_remat_ilp.h"
#include "run/compare.h"
#include "run/policy.h"
#include "run/prepare.h"
#include "run/remat_table.h"
#include "sim/io/report.h"
#include "sim/io/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ostream>
#include <sstream>

namespace ppsim::cli {
namespace po = boost::program_options;
namespace {

// The first line: what is solved, under which cap and accounting. `solved` is the scenario
// the form solves (the elf form's has lumped timing).
std::string heading_line(const std::string &schedule, const Scenario &solved, IlpForm form) {
  const bool selective = solved.has_selective_level();
  const int levels = solved.most_checkpoint_levels() - (selective ? 1 : 0);
  return fmt::format(
      "schedule {}, p = {}, m = {}, v = {}, {} ({} model, {} timing{}{})\n", schedule, solved.devices,
      solved.total_microbatches(), solved.chunks, describe_cap(solved, *capped_track(solved).cap),
      memory_model_name(solved.memory_model), solved.remat_timing == RematTiming::early ? "early" : "lumped",
      form == IlpForm::elf ? ", elf form" : "",
      levels > 0 ? fmt::format(", up to {} checkpoint levels{} per stage", levels,
                               selective ? " and selective" : "")
      : selective ? ", selective as a level per stage"
                  : "");
}

constexpr const char *kRowFormat = "{:<10} {:<9} {:>10} {:>10} {:>12} {:>4} {:>4} {:>4}  {}";

// One table row: the columns, the note, no trailing blanks when the note is empty.
template <typename... Columns> std::string row(const Columns &...columns) {
  std::string text = fmt::format(fmt::runtime(kRowFormat), columns...);
  text.erase(text.find_last_not_of(' ') + 1);
  return text + "\n";
}

std::string plan_row(const std::string &policy, const std::string &status, const Scenario &scenario,
                     const RematPlan &plan, const Schedule &schedule, const Simulation &simulation,
                     const std::string &note) {
  const TimeScale &scale = scenario.time_scale;
  return row(policy, status, scale.readable(simulation.metrics.max_span),
             scale.readable(simulation.metrics.makespan),
             format_checked_amount(scenario, largest_peak(scenario, schedule)),
             plan.forward_count(), plan.weight_input_count(), plan.full_backward_count(), note);
}

// With levels, which R the ILP plan runs at each (the R column counts them all): the whole
// stage, each checkpoint level, selective recomputation.
std::string levels_line(const Scenario &scenario, const RematPlan &plan) {
  const std::vector<int> selective_levels = scenario.selective_levels();
  const bool selective = scenario.has_selective_level();
  const auto levels = at(scenario.most_checkpoint_levels() - (selective ? 1 : 0));
  if (levels == 0 && !selective)
    return "";
  std::vector<int> count(levels + 1, 0);
  int selective_count = 0;
  for (int s = 0; s < plan.stages(); ++s) {
    for (int j = 0; j < plan.microbatches(); ++j) {
      const RematDecision &d = plan.at(s, j);
      if (d.forward != ForwardRemat::full)
        continue;
      if (d.level > 0 && d.level == selective_levels[at(s)])
        ++selective_count;
      else
        ++count[d.level];
    }
  }
  std::string text =
      levels > 0 ? fmt::format("ilp R by checkpoint level (`ppsim checkpoint COSTS --levels {}` "
                               "lists them): whole stage {}",
                               levels, count[0])
                 : fmt::format("ilp R by level: whole stage {}", count[0]);
  for (std::size_t level = 1; level <= levels; ++level)
    text += fmt::format(", level {} {}", level, count[level]);
  if (selective)
    text += fmt::format(", selective {}", selective_count);
  return text + "\n";
}

// One row of the --report page (docs/report.md): the run replayed with memory timelines for its
// curves. No bound: the bounds of docs/bounds.md assume no recomputation, which these plans add.
std::string report_row(const Scenario &scenario, const Schedule &schedule,
                       std::string_view policy) {
  const Simulation timed = simulate(scenario, schedule, SimulateOptions{true});
  return report_run_json(SimulationReport{scenario, schedule, timed, std::nullopt, {}}, policy);
}

// Writes the --report page: one table of `rows`, headed by the cap the runs were checked against.
void write_report(const std::string &path, const RunInput &input, const Scenario &scenario,
                  std::vector<std::string> rows) {
  write_file_atomically(path, one_table_page(ReportHeader{"remat", input.model_name, input.devices,
                                                          input.microbatches, input.time_unit},
                                             scenario, std::move(rows)));
}

// The status of a schedule's fastest run: the ILP's ("optimal", "gap 2.17%"), or whether a
// simple policy fits.
std::string run_status(const RankedRun &run) {
  if (!run.evaluation->run.remat_status.empty())
    return run.evaluation->run.remat_status;
  return run.fits() ? "fits" : "over cap";
}

// --auto: the ranking of `ppsim compare` (run/compare.h) under the scenario's cap, one row per
// schedule (its fastest run), so both commands name the same winner.
int print_auto(const RunInput &input, const po::variables_map &values, const IlpOptions &ilp,
               std::ostream &out, std::ostream &err) {
  if (ilp.form == IlpForm::elf)
    throw Error("", 0, "--ilp-form",
                "elf solves one schedule for cross-checking; --auto ranks with the ppsim form");
  if (!input.cap_activations && !input.budget_bytes)
    throw Error("remat needs a memory budget: give --K or --memory");
  std::vector<std::string> candidates;
  if (values.count("candidates")) {
    const std::string text = values["candidates"].as<std::string>();
    candidates = split_names(text);
    if (candidates.empty() || text.ends_with(',') || text.find(",,") != std::string::npos)
      throw Error("", 0, "--candidates",
                  fmt::format("expected comma-separated schedule names, got \"{}\"",
                              cut_for_message(text)));
    for (const std::string &name : candidates)
      check_schedule_option(name, "--candidates"); // unknown names fail with a suggestion
  }
  RunInput base = input;
  base.remat_time_limit_seconds = ilp.time_limit_seconds;
  base.remat_relative_gap = ilp.relative_gap;
  RankRequest request = rank_request(base, std::move(candidates));
  request.evaluate.timelines = values.count("report") > 0;
  request.threads = static_cast<unsigned>(checked_integer(values, "jobs", 1, kMaxThreads));
  Progress progress(err, progress_mode(values, err), "remat --auto", "runs");
  const std::vector<Ranking> rankings = rank_runs(request, progress.callback());
  progress.clear();
  const Ranking &ranking = rankings.front();
  const std::vector<const RankedRun *> best = ranking.best_per_schedule();
  const bool json = values["format"].as<std::string>() == "json";
  // The table is built whole and printed after the report is written (an unwritable report is
  // one error line); JSON has every run of the ranking, as `compare --format json` gives them
  // (the table shows each schedule's fastest).
  std::ostringstream table;
  // With the iteration's end the runs are ranked by iteration (docs/compare.md), a column of its
  // own.
  const bool iterations = input.iteration_end != IterationEnd::none;
  const std::string ranked_by = iterations ? "iteration" : "makespan";
  table << fmt::format("{:<4} {:<17} {:<9} {:<12} {:>10} {}{:>10} {:>12} {:>4} {:>4} {:>4}\n",
                     "rank", "schedule", "remat", "status", "makespan",
                     iterations ? fmt::format("{:>10} ", "iteration") : "", "max span", "peak",
                     "R", "RW", "RBW");
  int rank = 0;
  for (const RankedRun *run : best) {
    if (!run->ran()) {
      table << fmt::format("{:<4} {:<17} {:<9} n/a: {}\n", "-", run->schedule, run->policy,
                         run->unavailable);
      continue;
    }
    const Evaluation &e = *run->evaluation;
    const Scenario &scenario = e.run.scenario;
    const RematPlan plan = plan_of(e.run.schedule, scenario.stage_count(), scenario.microbatches);
    const std::optional<Ticks> &iteration = e.simulation.metrics.iteration;
    const std::string iteration_cell =
        iterations ? fmt::format("{:>10} ",
                                 iteration ? scenario.time_scale.readable(*iteration) : "-")
                   : "";
    table << fmt::format("{:<4} {:<17} {:<9} {:<12} {:>10} {}{:>10} {:>12} {:>4} {:>4} {:>4}\n",
                       run->fits() ? std::to_string(++rank) : "-", run->schedule, run->policy,
                       run_status(*run), scenario.time_scale.readable(e.simulation.metrics.makespan),
                       iteration_cell,
                       scenario.time_scale.readable(e.simulation.metrics.max_span),
                       format_checked_amount(scenario, largest_peak(scenario, e.run.schedule)),
                       plan.forward_count(), plan.weight_input_count(),
                       plan.full_backward_count());
  }
  const RankedRun *winner = ranking.winner();
  if (winner == nullptr) {
    // The rows (each over the cap or unavailable) say why; then the error line.
    out << (json ? rankings_json(rankings) : table.str());
    throw Error("no schedule and recomputation policy fits the cap");
  }
  table << fmt::format("winner: {}{}\n", winner->schedule,
                     winner->policy == "none" ? "" : " + " + winner->policy);
  if (!ranking.not_tried.empty()) {
    // A schedule's row is its fastest run tried: name the policies the pruning left out.
    table << fmt::format("not tried, as their {} without recomputation is already at or "
                       "above the winner's: {}\n",
                       ranked_by, fmt::join(ranking.not_tried, ", "));
  }
  // Where the ranking is narrower than compare's, say so, so that another winner is no surprise.
  const std::size_t every = all_schedules().size();
  table << fmt::format("ranked: each schedule's fastest run with {} recomputation, by {}, as "
                     "`ppsim compare` ranks them{}\n",
                     fmt::join(request.policies, ", "), ranked_by,
                     request.schedules.size() == every
                         ? ""
                         : fmt::format(" (--candidates: {} of its {} schedules)",
                                       request.schedules.size(), every));
  std::string written =
      json ? fmt::format("the ranking of {} runs to standard output", ranking.runs.size())
           : fmt::format("the ranking of {} schedules to standard output", best.size());
  if (values.count("report")) {
    std::vector<std::string> rows;
    for (const RankedRun *run : best) {
      rows.push_back(run->ran()
                         ? report_run_json(run->evaluation->report(), run->policy)
                         : report_unavailable_json(run->schedule, run->policy, run->unavailable));
    }
    const std::string path = values["report"].as<std::string>();
    write_report(path, input, winner->evaluation->run.scenario, std::move(rows));
    table << fmt::format("interactive report written to {}\n", path);
    written += ", the interactive report to " + path;
  }
  out << (json ? rankings_json(rankings) : table.str());
  progress.finish(written);
  return kOk;
}

} // namespace

int run_remat(const Args &args, std::ostream &out, std::ostream &err) {
  const auto started = std::chrono::steady_clock::now();
  po::options_description options("ppsim remat [SCENARIO.toml] --K k|--memory BYTES [options]");
  options.add_options()("time-limit", po::value<double>()->value_name("S"),
                        "seconds for the whole command (default 60, or [remat] time_limit), with "
                        "--auto per ILP solve; at the limit the ILP row is the best plan found, "
                        "with its bound")(
      "gap", po::value<double>()->value_name("G"), "ILP relative gap (default 0.03)")(
      "lp", po::value<std::string>()->value_name("FILE"), "write the ILP in CPLEX LP format")(
      "plan", po::value<std::string>()->value_name("FILE"),
      "write the optimal plan as CSV (docs/remat.md)")("svg",
                                                       po::value<std::string>()->value_name("FILE"),
                                                       "write the Gantt chart of the optimal plan")(
      "report", po::value<std::string>()->value_name("FILE"),
      "interactive HTML report of the policies, or with --auto of the ranking (docs/report.md)")(
      "auto", po::bool_switch(), "rank every schedule and policy, as ppsim compare does")(
      "candidates", po::value<std::string>()->value_name("A,B,..."),
      "schedules for --auto")("jobs,j", po::value<std::int64_t>()->default_value(1),
                              "runs evaluated at once with --auto")(
      "ilp-form", po::value<std::string>()->default_value("ppsim"),
      "ppsim (replay == objective) or elf (the reference formulation, for cross-checking)")(
      "format", po::value<std::string>()->default_value("text"),
      "text or json (with --auto: the ranking as `compare --format json`)");
  add_quiet_option(options);
  const auto parsed = parse_scenario_command(args, options, out);
  if (!parsed)
    return kOk;
  const po::variables_map &values = *parsed;
  const RunInput input = scenario_from_options(values);
  IlpOptions ilp = ilp_options(input);
  if (values.count("time-limit"))
    ilp.time_limit_seconds = values["time-limit"].as<double>();
  if (values.count("gap"))
    ilp.relative_gap = values["gap"].as<double>();
  if (!(ilp.time_limit_seconds > 0))
    throw Error("", 0, "--time-limit", "expected a positive number of seconds");
  if (!(ilp.relative_gap >= 0))
    throw Error("", 0, "--gap", "expected a non-negative gap");
  ilp.form =
      checked_choice(values, "ilp-form", {"ppsim", "elf"}) == "elf" ? IlpForm::elf : IlpForm::ppsim;
  const bool json = checked_choice(values, "format", {"text", "json"}) == "json";
  const std::vector<OutputPath> outputs = given_outputs(values, {"lp", "plan", "svg"});
  if (values["auto"].as<bool>()) {
    // The files describe one schedule's plan; --auto ranks several (docs/remat.md).
    check_outputs(given_outputs(values, {"report"}), scenario_input_files(values, input));
    if (!outputs.empty()) {
      throw Error("", 0, outputs.front().option,
                  "writes the plan of one schedule and --auto ranks several: run `ppsim remat "
                  "--schedule WINNER` "
                  "with it after --auto names the winner");
    }
    return print_auto(input, values, ilp, out, err);
  }
  if (values.count("candidates"))
    throw Error("", 0, "--candidates", "lists the schedules --auto ranks; give --auto");
  check_outputs(given_outputs(values, {"lp", "plan", "svg", "report"}),
                scenario_input_files(values, input));

  // Everything is computed before anything is printed: a cap no plan meets is one error line.
  // The time limit bounds the whole command: the ILP gets what the baselines left.
  const RematTable table = remat_table(input, ilp, started);
  const Scenario &scenario = table.scenario;
  const RematSolution &optimum = table.optimum;
  const Scenario &solved = table.solved.scenario;
  if (values.count("lp")) {
    std::ostringstream lp;
    solver::write_lp(
        build_stage_remat_model(solved, table.solved.base, ilp.form).model, lp);
    write_file_atomically(values["lp"].as<std::string>(), lp.str());
  }
  const std::string ilp_name = table.ilp_name();
  // The table is printed after the output files are written: an unwritable --plan or --svg is
  // one error line, not a table followed by one.
  std::string report = heading_line(table.schedule_name, solved, ilp.form);
  report += row("policy", "status", "max span", "makespan", "peak", "R", "RW", "RBW", "");
  for (const RematOutcome &o : table.baselines) {
    if (!o.found) {
      report += row(o.policy, "no plan", "-", "-", "-", "-", "-", "-", o.note);
      continue;
    }
    report += plan_row(o.policy, o.simulation.metrics.feasible ? "fits" : "over cap", o.scenario,
                       o.plan, o.schedule, o.simulation, "");
  }
  if (!optimum.found()) {
    // The baselines stand; the plan files cannot be written.
    out << (json ? remat_table_json(table)
                 : report + row(ilp_name, solver::status_name(optimum.status), "-", "-", "-", "-",
                                "-", "-", optimum.failure));
    if (values.count("plan") || values.count("svg") || values.count("report")) {
      throw Error(fmt::format("no ILP plan to write: {}", optimum.failure));
    }
    if (optimum.status != solver::Status::failed)
      return kOk;
    err << fmt::format("ppsim: internal error: {}\n", optimum.failure);
    return kInternalError;
  }
  const double ticks_per_unit = static_cast<double>(scenario.time_scale.ticks_per_unit);
  const std::string note = fmt::format(
      "{}objective {:.9g}{}, bound {:.9g}, {:.2f} s{}",
      optimum.from_start
          ? fmt::format("start plan kept at the {}: ", solver::limit_name(optimum.limit))
      : optimum.status == solver::Status::feasible
          ? fmt::format("best found at the {}: ", solver::limit_name(optimum.limit))
          : std::string(),
      optimum.objective / ticks_per_unit,
      // With the iteration's end the objective is the iteration, in no column of the table.
      optimum.simulation.metrics.iteration ? " (the iteration)" : "",
      optimum.best_bound / ticks_per_unit, optimum.seconds,
      ilp.form == IlpForm::elf   ? " (elf form: B and W split, lumped timing, first ops not pinned)"
      : optimum.first_ops_pinned ? ""
                                 : " (first ops not pinned)");
  report += plan_row(ilp_name, optimum.status_label(), solved, optimum.plan,
                     optimum.schedule, optimum.simulation, note);
  report += levels_line(solved, optimum.plan);
  if (values.count("plan")) {
    write_file_atomically(values["plan"].as<std::string>(),
                          format_plan_csv(optimum.plan, solved.selective_levels()));
  }
  if (values.count("svg")) {
    const Simulation timed = simulate(solved, optimum.schedule, SimulateOptions{true});
    write_file_atomically(
        values["svg"].as<std::string>(),
        gantt_svg(solved, optimum.schedule, timed, GanttOptions{.time_unit = input.time_unit}));
  }
  if (values.count("report")) {
    std::vector<std::string> rows;
    for (const RematOutcome &o : table.baselines) {
      rows.push_back(o.found ? report_row(o.scenario, o.schedule, o.policy)
                             : report_unavailable_json(table.schedule_name, o.policy, o.note));
    }
    rows.push_back(report_row(solved, optimum.schedule, ilp_name));
    const std::string path = values["report"].as<std::string>();
    write_report(path, input, scenario, std::move(rows));
    report += fmt::format("interactive report written to {}\n", path);
  }
  out << (json ? remat_table_json(table) : report);
  return kOk;
}

} // namespace ppsim::cli
