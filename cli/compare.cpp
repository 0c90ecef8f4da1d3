// `ppsim compare`: the question ppsim answers in one command. Every schedule (or a chosen list),
// with every recomputation policy that can matter, under one or more memory caps, ranked by
// makespan; the winner is named with its lower bound, gap and the reason for its bubbles, and
// what a user takes away (remat plan, PyTorch schedule, Gantt chart) is written on request.
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/progress.h"
#include "run/report_page.h"
#include "cli/scenario_options.h"
#include "run/compare.h"

#include "base/decimal.h"
#include "base/error.h"
#include "remat/plan.h"
#include "sim/critical_path.h"
#include "sim/io/report.h"
#include "run/scenario_file.h"
#include "sim/io/svg.h"
#include "sim/io/torch_csv.h"
#include "sim/schedules/registry.h"

#include <algorithm>
#include <fmt/args.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <optional>
#include <ostream>

namespace ppsim::cli {
namespace po = boost::program_options;
namespace {

std::string cap_text(const std::optional<double> &cap) {
  return cap ? format_readable(*cap) : std::string("none");
}

// "memory cap K = 4", "budget 80 GiB" or, where the count model turns a byte budget into a cap
// per schedule, says so: the heading of a table.
// `cells` in the table's `line` format.
std::string table_row(const std::string &line, const std::vector<std::string> &cells) {
  fmt::dynamic_format_arg_store<fmt::format_context> args;
  for (const std::string &cell : cells)
    args.push_back(cell);
  return fmt::vformat(line, args);
}

// With the iteration's end the table adds the iteration, by which the runs are ranked, and the
// bound and the gap are the iteration's.
void print_table(const std::vector<RankedRun> &rows, bool byte_peaks, bool iterations,
                 std::ostream &out) {
  const std::string line = fmt::format(
      "{{:<16}} {{:<9}} {{:>10}} {}{{:>10}} {{:>7}} {{:>8}} {{:>9}} {{:>7}} {{:>5}} {{:>10}} "
      "{{:>7}}\n",
      iterations ? "{:>10} " : "");
  std::vector<std::string> header{"schedule", "remat",  "makespan", "max span",
                                  "bubble",   "span bub", byte_peaks ? "peak GiB" : "peak act",
                                  "recomp",   "fits",   "bound",    "gap"};
  if (iterations)
    header.insert(header.begin() + 3, "iteration");
  out << table_row(line, header);
  for (const RankedRun &row : rows) {
    if (!row.ran()) {
      out << fmt::format("{:<16} {:<9} n/a: {}\n", row.schedule, row.policy, row.unavailable);
      continue;
    }
    const Evaluation &run = *row.evaluation;
    const Metrics &metrics = run.simulation.metrics;
    const TimeScale &scale = run.run.scenario.time_scale;
    const std::optional<Ticks> bound = run.ranked_bound();
    std::vector<std::string> cells{
        row.schedule,
        row.policy,
        scale.readable(metrics.makespan),
        scale.readable(metrics.max_span),
        fmt::format("{:.2f}%", 100 * metrics.bubble_ratio),
        fmt::format("{:.2f}%", 100 * metrics.span_bubble_ratio),
        byte_peaks ? format_readable(metrics.max_peak_bytes().value_or(0) / kBytesPerGiB)
                   : format_readable(metrics.max_peak_activations()),
        std::to_string(run.run.schedule.recompute_op_count()),
        row.fits() ? "yes" : "no",
        bound ? scale.readable(*bound) : "-",
        bound ? fmt::format("{:.2f}%", 100 * gap_to_bound(run.ranked_ticks(), *bound)) : "-"};
    if (iterations)
      cells.insert(cells.begin() + 3,
                   metrics.iteration ? scale.readable(*metrics.iteration) : "-");
    out << table_row(line, cells);
  }
}

// The winner in words: its gap to the bound and the two largest causes of idle time.
// `sized`: the ranking spans microbatch sizes, so the winner's is named.
std::string winner_text(const RankedRun &row, const std::string &time_unit, bool sized) {
  const Evaluation &run = *row.evaluation;
  const Scenario &scenario = run.run.scenario;
  const TimeScale &scale = scenario.time_scale;
  const Metrics &metrics = run.simulation.metrics;
  std::string text = fmt::format(
      "winner: {}{}{}, {} {} {}", row.schedule,
      row.policy == "none" ? ""
                           : fmt::format(" with {} recomputation ({} ops)", row.policy,
                                         run.run.schedule.recompute_op_count()),
      sized ? fmt::format(" at microbatch size {} (m = {})", run.run.input.microbatch_size,
                          run.run.input.microbatches)
            : "",
      metrics.iteration ? "iteration" : "makespan", scale.readable(run.ranked_ticks()),
      time_unit);
  if (metrics.iteration)
    text += fmt::format(" (makespan {} {})", scale.readable(metrics.makespan), time_unit);
  if (const std::optional<Ticks> bound = run.ranked_bound()) {
    text += fmt::format(", {:.2f}% above the lower bound {} {}",
                        100 * gap_to_bound(run.ranked_ticks(), *bound), scale.readable(*bound),
                        time_unit);
  }
  text += "\n";
  if (!scenario.stage_layers.empty())
    text += fmt::format("its layers per stage: {}\n", fmt::join(scenario.stage_layers, " "));
  BubbleExplanation explanation =
      explain_bubbles(scenario, run.run.schedule, run.simulation.timing);
  std::sort(explanation.idle_causes.begin(), explanation.idle_causes.end(),
            [](const IdleCause &a, const IdleCause &b) { return a.idle > b.idle; });
  if (explanation.idle_causes.empty())
    return text + "its bubbles: none\n";
  text += "its bubbles:";
  for (std::size_t k = 0; k < std::min<std::size_t>(2, explanation.idle_causes.size()); ++k) {
    const IdleCause &cause = explanation.idle_causes[k];
    text += fmt::format("{} device {} idles {} {} waiting for {}", k == 0 ? "" : ";", cause.device,
                        scale.readable(cause.idle), time_unit, cause.waiting_for);
  }
  return text + " (ppsim simulate --explain shows all)\n";
}

// Per-stage costs give a schedule with v chunks per device v times the work of a one-chunk
// schedule; that is the user's explicit choice, but the ranking then compares different models.
void warn_if_unfair(const RunInput &base, const std::vector<RankedRun> &rows,
                    std::ostream &err) {
  if (base.costs_per_device || !base.costs_files.empty())
    return;
  int fewest = 0;
  int most = 0;
  for (const RankedRun &row : rows) {
    if (!row.ran())
      continue;
    const int chunks = row.evaluation->run.scenario.chunks;
    fewest = fewest == 0 ? chunks : std::min(fewest, chunks);
    most = std::max(most, chunks);
  }
  if (fewest == most)
    return;
  err << fmt::format(
      "ppsim: warning: model.cost_unit = \"stage\" gives schedules with {} chunks per device {} "
      "times the work of those with {}; use \"device\" to compare the same model\n",
      most, most / fewest, fewest);
}

// The base order of a run as a PyTorch pipelining CSV (PyTorch has no recomputation actions: the
// plan file carries them), or nothing when PyTorch cannot express the schedule (two pipes).
std::optional<TorchCsvExport> torch_export(const RankedRun &row) {
  const PreparedRun &run = row.evaluation->run;
  try {
    return write_torch_csv(run.scenario, run.base_schedule());
  } catch (const Error &) {
    return std::nullopt;
  }
}

// The run whose files are written: the fastest that fits and can be written as asked. A
// two-pipe DualPipe has no PyTorch form and selective recomputation from the fractions' defaults
// no per-(s,j) plan, so when the winner is one of them the files describe the fastest run that
// has both.
struct TakeAway {
  const RankedRun *row = nullptr;
  std::optional<TorchCsvExport> torch;
};

TakeAway take_away(const std::vector<const RankedRun *> &rows, bool plan, bool torch) {
  for (const RankedRun *candidate : rows) {
    const RankedRun &row = *candidate;
    // Selective recomputation from the fractions' defaults has no per-microbatch plan; measured
    // selective recomputation is a level of the plan (docs/remat.md, "Checkpoint levels").
    if (!row.fits() || (plan && row.policy == "selective" &&
                        !row.evaluation->run.scenario.has_selective_level()))
      continue;
    TakeAway chosen{&row, std::nullopt};
    if (torch && !(chosen.torch = torch_export(row)))
      continue;
    return chosen;
  }
  return {};
}

} // namespace

int run_compare(const Args &args, std::ostream &out, std::ostream &err) {
  po::options_description options("ppsim compare [SCENARIO.toml] [options]");
  options.add_options()("schedules", po::value<std::string>()->value_name("A,B,..."),
                        "schedules to compare (default: all)")(
      "caps", po::value<std::string>()->value_name("K1,K2,..."),
      "memory caps K to compare under")(
      "microbatch-sizes", po::value<std::string>()->value_name("B1,B2,..."),
      "microbatch sizes to rank at the scenario's batch of m x b samples (needs cost files at "
      "several sizes)")("time-limit", po::value<double>()->value_name("S"),
                                        "seconds per ILP solve (default: remat.time_limit)")(
      "format", po::value<std::string>()->default_value("text"), "text, csv or json")(
      "svg", po::value<std::string>()->value_name("FILE"),
      "Gantt chart of the winner")("plan", po::value<std::string>()->value_name("FILE"),
                                   "the winner's recomputation plan (CSV, docs/remat.md)")(
      "torch-csv", po::value<std::string>()->value_name("FILE"),
      "the winner's schedule as a PyTorch pipelining CSV")(
      "report", po::value<std::string>()->value_name("FILE"),
      "interactive HTML report of the ranking (docs/report.md)");
  add_quiet_option(options);
  const auto parsed = parse_scenario_command(args, options, out);
  if (!parsed)
    return kOk;
  const po::variables_map &values = *parsed;
  const std::string format = checked_choice(values, "format", {"text", "csv", "json"});
  RunInput base = scenario_from_options(values);
  // Output files that cannot be written are refused before a minute of ranking is printed.
  check_outputs(given_outputs(values, {"svg", "plan", "torch-csv", "report"}),
                scenario_input_files(values, base));
  if (values.count("time-limit")) {
    base.remat_time_limit_seconds = values["time-limit"].as<double>();
    if (!(base.remat_time_limit_seconds > 0))
      throw Error("", 0, "--time-limit", "expected a positive number of seconds");
  }
  std::vector<std::string> schedules;
  if (values.count("schedules")) {
    schedules = split_names(values["schedules"].as<std::string>());
    if (schedules.empty())
      throw Error("", 0, "--schedules", "expected at least one schedule name");
    for (const std::string &name : schedules)
      check_schedule_option(name, "--schedules");
  }
  std::optional<std::vector<std::optional<double>>> caps;
  if (values.count("caps")) {
    caps.emplace();
    for (const std::string &text : split_names(values["caps"].as<std::string>())) {
      RunInput probe;
      set_scenario_field_from_text(probe, "cluster.K", text, {"", 0, "--caps"});
      caps->push_back(probe.cap_activations);
    }
    if (caps->empty())
      throw Error("", 0, "--caps", "expected at least one cap K, as K1,K2,...");
  }
  std::vector<int> sizes;
  if (values.count("microbatch-sizes")) {
    for (const std::string &text : split_names(values["microbatch-sizes"].as<std::string>())) {
      RunInput probe;
      set_scenario_field_from_text(probe, "pipeline.microbatch_size", text,
                                   {"", 0, "--microbatch-sizes"});
      sizes.push_back(probe.microbatch_size);
    }
    if (sizes.empty())
      throw Error("", 0, "--microbatch-sizes", "expected at least one size, as B1,B2,...");
  }
  RankRequest request = rank_request(base, std::move(schedules), std::move(caps));
  request.microbatch_sizes = std::move(sizes);
  request.sizes_origin = {"", 0, "--microbatch-sizes"}; // rank_runs checks the sizes first
  request.evaluate.timelines = values.count("svg") || values.count("report");
  const bool quiet = values["quiet"].as<bool>();
  Progress progress(err, progress_mode(values, err), "compare", "runs");
  const std::vector<Ranking> rankings = rank_runs(request, progress.callback());
  progress.clear();
  warn_if_unfair(base, rankings.front().runs, err);
  // The runs the winner is chosen from: the first cap's, or every microbatch size's (all process
  // the same samples). Outputs are checked before anything is printed or written.
  std::vector<const RankedRun *> first;
  if (request.microbatch_sizes.empty()) {
    for (const RankedRun &run : rankings.front().runs)
      first.push_back(&run);
  } else {
    first = pooled_ranking(rankings);
  }
  const auto fitting = std::find_if(first.begin(), first.end(),
                                    [](const RankedRun *run) { return run->fits(); });
  const RankedRun *winner = fitting == first.end() ? nullptr : *fitting;
  const bool wants_plan = values.count("plan") > 0;
  const bool wants_torch = values.count("torch-csv") > 0;
  const bool wants_files = values.count("svg") || wants_plan || wants_torch;
  if (wants_files && winner == nullptr) {
    throw Error(
        "no schedule and recomputation policy fits the memory cap, so there is nothing to write");
  }
  const TakeAway chosen = wants_files ? take_away(first, wants_plan, wants_torch) : TakeAway{};
  if (wants_files && chosen.row == nullptr) {
    throw Error("no run that fits the memory cap has a PyTorch schedule and a per-microbatch plan "
                "to write");
  }
  if (winner == nullptr && base.budget_bytes && base.memory_model == MemoryModel::bytes) {
    double least = std::numeric_limits<double>::infinity();
    for (const RankedRun *row : first) {
      if (row->ran())
        least =
            std::min(least, row->evaluation->simulation.metrics.max_peak_bytes().value_or(least));
    }
    if (std::isfinite(least) && !quiet) {
      err << fmt::format(
          "ppsim: no schedule fits {}; the least memory any schedule and policy reached is {}\n",
          format_bytes(*base.budget_bytes), format_bytes(least));
    }
  }

  const bool byte_peaks = base.memory_model == MemoryModel::bytes && base.budget_bytes;
  if (format == "csv") {
    out << "K,remat," << report_csv_header() << ",unavailable\n";
    for (const Ranking &ranking : rankings) {
      for (const RankedRun &row : ranking.runs) {
        if (row.ran()) {
          out << cap_text(ranking.cap) << "," << row.policy << ","
              << report_csv_row(row.evaluation->report()) << ",\n";
        } else {
          out << fmt::format("{},{},{},{},{},,,,,,,,,,,,\"{}\"\n", cap_text(ranking.cap), row.policy,
                             row.schedule, base.devices,
                             ranking.microbatch_size > 0 ? ranking.microbatches
                                                         : base.microbatches,
                             row.unavailable);
        }
      }
    }
  } else if (format == "json") {
    out << rankings_json(rankings);
  } else {
    std::size_t not_tried = 0;
    const bool iterations = base.iteration_end != IterationEnd::none;
    for (std::size_t k = 0; k < rankings.size(); ++k) {
      // Over sizes the heading names the size's m.
      out << fmt::format("{}{}{}  (p={}{})\n", k == 0 ? "" : "\n",
                         base.model_name.empty() ? "" : fmt::format("model {}  ", base.model_name),
                         ranking_heading(base, rankings[k]), base.devices,
                         rankings[k].microbatch_size > 0
                             ? ""
                             : fmt::format(" m={}", base.microbatches));
      print_table(rankings[k].runs, byte_peaks, iterations, out);
      not_tried += rankings[k].not_tried.size();
    }
    if (base.memory_model == MemoryModel::bytes && base.budget_bytes) {
      out << fmt::format("the bounds know no byte budget: a gap includes what fitting {} costs\n",
                         format_bytes(*base.budget_bytes));
    }
    if (not_tried > 0) {
      out << fmt::format("\n{} (schedule, policy) pairs not tried: their {} without "
                         "recomputation is already at or above the winner's\n",
                         not_tried, iterations ? "iteration" : "makespan");
    }
    if (winner != nullptr)
      out << "\n" << winner_text(*winner, base.time_unit, !request.microbatch_sizes.empty());
    else
      out << fmt::format("\nno winner: no run fits {} (the n/a rows give the least peak a "
                         "recomputation plan reaches)\n",
                         cap_label(base, rankings.front().cap));
  }
  std::size_t runs = 0;
  for (const Ranking &ranking : rankings)
    runs += ranking.runs.size();
  std::vector<std::string> written{fmt::format("the ranking of {} runs to standard output", runs)};
  if (values.count("report")) {
    const std::string path = values["report"].as<std::string>();
    write_file_atomically(path, rankings_page(base, rankings));
    if (format == "text")
      out << fmt::format("interactive report written to {}\n", path);
    written.push_back(fmt::format("the interactive report to {}", path));
  }
  if (!wants_files) {
    progress.finish(fmt::format("{}", fmt::join(written, ", ")));
    return kOk;
  }
  const RankedRun &best = *chosen.row;
  const Evaluation &best_run = *best.evaluation;
  if (&best != winner) {
    // In csv or json the note goes to stderr, where the files written are listed.
    (format == "text" ? out : err) << fmt::format(
        "{}{}{} has no {}; the files below are for {}{}, the fastest run that has ({} {} {}, "
        "+{:.2f}%)\n",
        format == "text" ? "" : "ppsim: ", winner->schedule,
        winner->policy == "none" ? "" : " + " + winner->policy,
        wants_torch && !torch_export(*winner) ? "PyTorch pipelining form" : "per-microbatch plan",
        best.schedule, best.policy == "none" ? "" : " + " + best.policy,
        best_run.simulation.metrics.iteration ? "iteration" : "makespan",
        best_run.run.scenario.time_scale.readable(best_run.ranked_ticks()), base.time_unit,
        100 * (to_double(best_run.ranked_time()) / to_double(winner->evaluation->ranked_time()) -
               1));
  }
  if (chosen.torch) {
    for (const std::string &warning : chosen.torch->warnings)
      err << fmt::format("ppsim: warning: {}\n", warning);
  }
  const auto note = [&](const std::string &what, const std::string &path,
                        const std::string &remark = "") {
    if (format == "text")
      out << fmt::format("{} of {} written to {}{}\n", what, best.schedule, path, remark);
    written.push_back(fmt::format("the {} to {}", what, path));
  };
  if (values.count("svg")) {
    write_file_atomically(values["svg"].as<std::string>(),
                          gantt_svg(best_run.run.scenario, best_run.run.schedule, best_run.simulation,
                                    GanttOptions{.time_unit = base.time_unit}));
    note("Gantt chart", values["svg"].as<std::string>());
  }
  if (values.count("plan")) {
    const RematPlan plan = plan_of(best_run.run.schedule, best_run.run.scenario.stage_count(),
                                   best_run.run.scenario.microbatches);
    write_file_atomically(values["plan"].as<std::string>(),
                          format_plan_csv(plan, best_run.run.scenario.selective_levels()));
    // A run that fits without recomputation still gets its (empty) plan, said so.
    note("recomputation plan", values["plan"].as<std::string>(),
         plan.recompute_count() == 0 ? " (empty: the run fits without recomputation)" : "");
  }
  if (chosen.torch) {
    write_file_atomically(values["torch-csv"].as<std::string>(), chosen.torch->text);
    note("PyTorch schedule", values["torch-csv"].as<std::string>());
  }
  progress.finish(fmt::format("{}", fmt::join(written, ", ")));
  return kOk;
}

} // namespace ppsim::cli
