// `ppsim remat`: for a cap (--K or --memory), the optimal forward/backward recomputation of
// the StageRemat ILP beside the baselines (docs/remat.md, "The ILP (ppsim form)" and "Simple
// policies"), or with
// --auto the ranking of every candidate base schedule (docs/remat.md, "--auto").
#include "base/index.h"
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/progress.h"
#include "cli/report_page.h"
#include "cli/scenario_options.h"

#include "base/error.h"
#include "remat/baselines.h"
#include "remat/stage_remat_ilp.h"
#include "run/auto_mode.h"
#include "run/policy.h"
#include "run/prepare.h"
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

double largest_peak(const Scenario &scenario, const Schedule &schedule) {
  const std::vector<double> peaks = device_peaks(scenario, schedule, capped_track(scenario));
  return peaks.empty() ? 0.0 : *std::max_element(peaks.begin(), peaks.end());
}

// The first line: what is solved, under which cap and accounting. `solved` is the scenario
// the form solves (the elf form's has lumped timing).
std::string heading_line(const std::string &schedule, const Scenario &solved, IlpForm form) {
  const int levels = solved.most_checkpoint_levels();
  return fmt::format(
      "schedule {}, p = {}, m = {}, v = {}, {} ({} model, {} timing{}{})\n", schedule, solved.devices,
      solved.total_microbatches(), solved.chunks, describe_cap(solved, *capped_track(solved).cap),
      memory_model_name(solved.memory_model), solved.remat_timing == RematTiming::early ? "early" : "lumped",
      form == IlpForm::elf ? ", elf form" : "",
      levels > 0 ? fmt::format(", up to {} checkpoint levels per stage", levels) : "");
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

// With checkpoint levels, which R the ILP plan runs at each level (the R column counts them all).
std::string levels_line(const Scenario &scenario, const RematPlan &plan) {
  const auto levels = at(scenario.most_checkpoint_levels());
  if (levels == 0)
    return "";
  std::vector<int> count(levels + 1, 0);
  for (int s = 0; s < plan.stages(); ++s) {
    for (int j = 0; j < plan.microbatches(); ++j) {
      const RematDecision &d = plan.at(s, j);
      if (d.forward == ForwardRemat::full)
        ++count[d.level];
    }
  }
  std::string text = fmt::format(
      "ilp R by checkpoint level (`ppsim checkpoint COSTS --levels {}` lists them): whole stage {}",
      levels, count[0]);
  for (std::size_t level = 1; level <= levels; ++level)
    text += fmt::format(", level {} {}", level, count[level]);
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
void write_report(const std::string &path, const ScenarioInput &input, const Scenario &scenario,
                  std::vector<std::string> rows) {
  write_file_atomically(path, one_table_page(ReportHeader{"remat", input.model_name, input.devices,
                                                          input.microbatches, input.time_unit},
                                             scenario, std::move(rows)));
}

int print_auto(const ScenarioInput &input, const po::variables_map &values, const IlpOptions &ilp,
               std::ostream &out, std::ostream &err) {
  std::vector<std::string> candidates = default_auto_candidates();
  if (values.count("candidates")) {
    candidates.clear();
    const std::string text = values["candidates"].as<std::string>();
    std::stringstream list(text);
    for (std::string name; std::getline(list, name, ',');) {
      if (name.empty())
        throw Error("", 0, "--candidates",
                    fmt::format("expected comma-separated schedule names, got \"{}\"", text));
      check_schedule_option(name, "--candidates"); // unknown names fail with a suggestion
      candidates.push_back(name);
    }
    if (candidates.empty() || text.ends_with(','))
      throw Error("", 0, "--candidates",
                  fmt::format("expected comma-separated schedule names, got \"{}\"", text));
  }
  // The page replays each plan on its candidate's scenario; the elf form solves and replays
  // with lumped timing on a split base (docs/remat.md), so its times would not match the table.
  if (values.count("report") && ilp.form == IlpForm::elf)
    throw Error("", 0, "--report",
                "the page shows plans on the scenario's own timing; rank with --ilp-form ppsim");
  Progress progress(err, progress_mode(values, err), "remat --auto", "candidates");
  const std::vector<AutoCandidate> ranked = rank_schedules(
      input, candidates, ilp, static_cast<int>(checked_integer(values, "jobs", 1, kMaxThreads)),
      progress.callback());
  progress.clear();
  out << fmt::format("{:<4} {:<17} {:<12} {:>10} {:>12} {:>4} {:>4} {:>4} {:>8}\n", "rank",
                     "schedule", "status", "max span", "peak", "R", "RW", "RBW", "solve s");
  int rank = 0;
  for (const AutoCandidate &c : ranked) {
    if (!c.solved()) {
      out << fmt::format("{:<4} {:<17} {:<12} {}\n", "-", c.schedule, c.status, c.note);
      continue;
    }
    const RematSolution &s = *c.solution;
    out << fmt::format("{:<4} {:<17} {:<12} {:>10} {:>12} {:>4} {:>4} {:>4} {:>8.2f}\n", ++rank,
                       c.schedule, c.status,
                       c.scenario.time_scale.readable(s.simulation.metrics.max_span),
                       format_checked_amount(c.scenario, c.peak), s.plan.forward_count(),
                       s.plan.weight_input_count(), s.plan.full_backward_count(), c.seconds);
  }
  if (rank == 0)
    throw Error("no candidate schedule fits the cap");
  out << fmt::format("winner: {}\n", ranked.front().schedule);
  // A narrower ranking than compare's: say so, so that a different winner is not a surprise.
  out << fmt::format("ranked: the ILP's plan of each of the {} candidates, by max span; `ppsim "
                     "compare` also ranks no, full and selective recomputation, by makespan\n",
                     ranked.size());
  std::string written =
      fmt::format("the ranking of {} candidates to standard output", ranked.size());
  if (values.count("report")) {
    std::vector<std::string> rows;
    for (const AutoCandidate &c : ranked) {
      rows.push_back(c.solved() ? report_row(c.scenario, c.solution->schedule, "ilp")
                                : report_unavailable_json(
                                      c.schedule, "ilp",
                                      c.note.empty() ? c.status : c.status + ": " + c.note));
    }
    const std::string path = values["report"].as<std::string>();
    write_report(path, input, ranked.front().scenario, std::move(rows));
    out << fmt::format("interactive report written to {}\n", path);
    written += ", the interactive report to " + path;
  }
  progress.finish(written);
  return kOk;
}

} // namespace

int run_remat(const Args &args, std::ostream &out, std::ostream &err) {
  const auto started = std::chrono::steady_clock::now();
  po::options_description options("ppsim remat [SCENARIO.toml] --K k|--memory BYTES [options]");
  options.add_options()("time-limit", po::value<double>()->value_name("S"),
                        "seconds for the whole command (default 60, or [remat] time_limit); at the "
                        "limit the ILP row is the best plan found, with its bound")(
      "gap", po::value<double>()->value_name("G"), "ILP relative gap (default 0.03)")(
      "lp", po::value<std::string>()->value_name("FILE"), "write the ILP in CPLEX LP format")(
      "plan", po::value<std::string>()->value_name("FILE"),
      "write the optimal plan as CSV (docs/remat.md)")("svg",
                                                       po::value<std::string>()->value_name("FILE"),
                                                       "write the Gantt chart of the optimal plan")(
      "report", po::value<std::string>()->value_name("FILE"),
      "interactive HTML report of the policies, or with --auto of the ranking (docs/report.md)")(
      "auto", po::bool_switch(), "solve every candidate schedule and rank them")(
      "candidates", po::value<std::string>()->value_name("A,B,..."),
      "schedules for --auto")("jobs,j", po::value<std::int64_t>()->default_value(1),
                              "candidates solved in parallel with --auto")(
      "ilp-form", po::value<std::string>()->default_value("ppsim"),
      "ppsim (replay == objective) or elf (the reference formulation, for cross-checking)");
  add_quiet_option(options);
  const auto parsed = parse_scenario_command(args, options, out);
  if (!parsed)
    return kOk;
  const po::variables_map &values = *parsed;
  const ScenarioInput input = scenario_from_options(values);
  IlpOptions ilp{input.remat_time_limit_seconds, input.remat_relative_gap};
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

  const PreparedRun run = prepare_run(input);
  const Scenario scenario = scenario_with_checkpoint_levels(run.input, run.scenario);
  capped_track(scenario); // a cap is required before anything is printed
  check_stage_remat_size(scenario, run.schedule, ilp.form); // refused before the baselines run
  if (values.count("lp")) {
    std::ostringstream lp;
    const FormInstance instance = form_instance(scenario, run.schedule, ilp.form);
    solver::write_lp(build_stage_remat_model(instance.scenario, instance.base, ilp.form).model, lp);
    write_file_atomically(values["lp"].as<std::string>(), lp.str());
  }
  // Everything is computed before anything is printed: a cap no plan meets is one error line.
  // The time limit bounds the whole command: the ILP gets what the baselines left.
  const std::vector<RematOutcome> baselines = run_baselines(run.input, scenario, run.schedule);
  IlpOptions remaining = ilp;
  remaining.time_limit_seconds = std::max(
      0.0, ilp.time_limit_seconds -
               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  const RematSolution optimum = solve_stage_remat(scenario, run.schedule, remaining);
  // The elf form solves and replays the split base with lumped timing (docs/remat.md, "The ILP
  // (ppsim form)").
  const FormInstance solved_instance = form_instance(scenario, run.schedule, ilp.form);
  const Scenario &solved = solved_instance.scenario;
  const std::string ilp_name = ilp.form == IlpForm::elf ? "ilp-elf" : "ilp";
  // The table is printed after the output files are written: an unwritable --plan or --svg is
  // one error line, not a table followed by one.
  std::string report = heading_line(run.schedule.name, solved, ilp.form);
  report += row("policy", "status", "max span", "makespan", "peak", "R", "RW", "RBW", "");
  for (const RematOutcome &o : baselines) {
    if (!o.found) {
      report += row(o.policy, "no plan", "-", "-", "-", "-", "-", "-", o.note);
      continue;
    }
    report += plan_row(o.policy, o.simulation.metrics.feasible ? "fits" : "over cap", o.scenario,
                       o.plan, o.schedule, o.simulation, "");
  }
  if (!optimum.found()) {
    // The baselines stand; the plan files cannot be written.
    out << report
        << row(ilp_name, solver::status_name(optimum.status), "-", "-", "-", "-", "-", "-",
               optimum.failure);
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
      "{}objective {:.9g}, bound {:.9g}, {:.2f} s{}",
      optimum.from_start                            ? "start plan kept at the time limit: "
      : optimum.status == solver::Status::feasible ? "best found at the time limit: "
                                                   : "",
      optimum.objective / ticks_per_unit, optimum.best_bound / ticks_per_unit, optimum.seconds,
      ilp.form == IlpForm::elf   ? " (elf form: B and W split, lumped timing, first ops not pinned)"
      : optimum.first_ops_pinned ? ""
                                 : " (first ops not pinned)");
  report += plan_row(ilp_name, optimum.status_label(), solved, optimum.plan,
                     optimum.schedule, optimum.simulation, note);
  report += levels_line(solved, optimum.plan);
  if (values.count("plan")) {
    write_file_atomically(values["plan"].as<std::string>(), format_plan_csv(optimum.plan));
  }
  if (values.count("svg")) {
    const Simulation timed = simulate(solved, optimum.schedule, SimulateOptions{true});
    write_file_atomically(
        values["svg"].as<std::string>(),
        gantt_svg(solved, optimum.schedule, timed, GanttOptions{.time_unit = input.time_unit}));
  }
  if (values.count("report")) {
    std::vector<std::string> rows;
    for (const RematOutcome &o : baselines) {
      rows.push_back(o.found ? report_row(o.scenario, o.schedule, o.policy)
                             : report_unavailable_json(run.schedule.name, o.policy, o.note));
    }
    rows.push_back(report_row(solved, optimum.schedule, ilp_name));
    const std::string path = values["report"].as<std::string>();
    write_report(path, input, scenario, std::move(rows));
    report += fmt::format("interactive report written to {}\n", path);
  }
  out << report;
  return kOk;
}

} // namespace ppsim::cli
