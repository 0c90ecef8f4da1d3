// `ppsim compare`: the question ppsim answers in one command. Every schedule (or a chosen list),
// with every recomputation policy that can matter, under one or more memory caps, ranked by
// makespan; the winner is named with its lower bound, gap and the reason for its bubbles, and
// what a user takes away (remat plan, PyTorch schedule, Gantt chart) is written on request.
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/progress.h"
#include "cli/report_page.h"
#include "cli/scenario_options.h"
#include "run/prepare.h"

#include "base/decimal.h"
#include "base/error.h"
#include "remat/plan.h"
#include "sim/critical_path.h"
#include "sim/io/report.h"
#include "sim/io/scenario_toml.h"
#include "sim/io/svg.h"
#include "sim/io/torch_csv.h"
#include "sim/schedules/registry.h"

#include <algorithm>
#include <exception>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <optional>
#include <ostream>
#include <sstream>
#include <system_error>
#include <thread>

namespace ppsim::cli {
namespace po = boost::program_options;
namespace {

struct Row {
  std::string schedule;
  std::string policy; // recomputation policy (remat.policy)
  std::optional<double> cap;
  std::optional<PreparedRun> run;
  std::optional<Simulation> simulation;
  std::optional<BoundsReport> bounds;
  std::string unavailable; // why the schedule cannot run here (its constraints, a solver failure)

  [[nodiscard]] bool fits() const { return simulation && simulation->metrics.feasible; }
  /// In time units, exact: rows of one table have different tick scales.
  [[nodiscard]] Rational makespan() const {
    return run->scenario.time_scale.exact_units(simulation->metrics.makespan);
  }
};

std::vector<std::string> split_list(const std::string &text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty())
      items.push_back(item);
  }
  return items;
}

// The bounds assume the memory cap holds, so a run over it has no bound to be compared with.
std::optional<Ticks> valid_bound(const Row &row) {
  if (!row.bounds || !row.fits())
    return std::nullopt;
  return row.bounds->best_lower_bound;
}

int recompute_ops(const Schedule &schedule) {
  int count = 0;
  for (const std::vector<Op> &ops : schedule.device_ops) {
    count += static_cast<int>(std::count_if(ops.begin(), ops.end(),
                                            [](const Op &op) { return is_recompute(op.kind()); }));
  }
  return count;
}

// One (schedule, policy) run under `cap`; `prepared`, when given, is that schedule's run without
// recomputation, whose base schedule the policy then starts from.
Row evaluate(const ScenarioInput &base, const std::string &schedule, const std::string &policy,
             const std::optional<double> &cap, bool timelines,
             const std::optional<PreparedRun> &prepared = std::nullopt) {
  ScenarioInput input = base;
  input.schedule = schedule;
  input.schedule_file.clear();
  input.remat_policy = policy;
  input.cap_activations = cap;
  Row row{schedule, policy, cap, std::nullopt, std::nullopt, std::nullopt, ""};
  try {
    row.run = prepared ? with_remat_policy(*prepared, policy) : prepare_policy_run(input);
    row.simulation = simulate(row.run->scenario, row.run->schedule, SimulateOptions{timelines});
    row.bounds = bounds_for_run(input, *row.run);
  } catch (const Error &error) {
    row.unavailable = error.sentence();
    row.run.reset();
    row.simulation.reset();
  }
  return row;
}

// Fastest first: rows that fit, then rows over the cap, then unavailable ones.
bool ranks_before(const Row &a, const Row &b) {
  if (a.simulation.has_value() != b.simulation.has_value())
    return a.simulation.has_value();
  if (!a.simulation)
    return false;
  if (a.fits() != b.fits())
    return a.fits();
  return a.makespan() < b.makespan();
}

// The recomputation policies to rank: the ones asked for, or, under a cap, every policy that can
// change the answer: none, full forward recomputation, selective recomputation of the attention
// cores where a cost file measures it, and the optimal ILP plan (last, so that the plans found
// before it prune its solves).
std::vector<std::string> policies_for(const ScenarioInput &base, bool capped) {
  if (base.origins.count("remat.policy"))
    return split_list(base.remat_policy);
  if (!capped)
    return {"none"};
  if (base.costs_file.empty())
    return {"none", "full", "ilp"};
  return {"none", "full", "selective", "ilp"};
}

// How many of `policies` recompute: each is tried on every schedule over the cap.
std::size_t recomputing_count(const std::vector<std::string> &policies) {
  return static_cast<std::size_t>(
      std::count_if(policies.begin(), policies.end(),
                    [](const std::string &policy) { return policy != "none"; }));
}

// Runs task(0) here and task(1), when count is 2, on a second thread; serially when no thread
// can be started. An exception of either task reaches the caller after both have ended.
void run_pair(std::size_t count, const std::function<void(std::size_t)> &task) {
  std::exception_ptr failure;
  std::optional<std::thread> helper;
  if (count > 1) {
    try {
      helper.emplace([&] {
        try {
          task(1);
        } catch (...) {
          failure = std::current_exception();
        }
      });
    } catch (const std::system_error &) {
      helper.reset();
    }
  }
  try {
    if (count > 0)
      task(0);
  } catch (...) {
    if (helper)
      helper->join();
    throw;
  }
  if (helper) {
    helper->join();
  } else if (count > 1) {
    task(1);
  }
  if (failure)
    std::rethrow_exception(failure);
}

std::string cap_text(const std::optional<double> &cap) {
  return cap ? format_readable(*cap) : std::string("none");
}

// "K = 4" or "budget 80 GiB" (byte model), as the runs check it: progress lines name it.
// Whether the runs check a cap K that the count (or zb) model derives from the byte budget, one
// per schedule (sim/scenario_builder.cpp).
bool cap_of_budget(const ScenarioInput &base, const std::optional<double> &cap) {
  return base.memory_model != MemoryModel::bytes && base.budget_bytes && !cap;
}

std::string cap_label(const ScenarioInput &base, const std::optional<double> &cap) {
  if (base.memory_model == MemoryModel::bytes && base.budget_bytes)
    return "budget " + format_bytes(*base.budget_bytes);
  if (cap_of_budget(base, cap))
    return "K of " + format_bytes(*base.budget_bytes);
  return "K = " + cap_text(cap);
}

// "memory cap K = 4", "budget 80 GiB" or, where the count model turns a byte budget into a cap
// per schedule, says so: the heading of a table.
std::string cap_heading(const ScenarioInput &base, const std::optional<double> &cap) {
  if (cap_of_budget(base, cap)) {
    return fmt::format("memory cap K of the {} budget per schedule, in the {} model (memory_model "
                       "= \"bytes\" checks bytes)",
                       format_bytes(*base.budget_bytes), memory_model_name(base.memory_model));
  }
  const std::string label = cap_label(base, cap);
  return label.starts_with("K = ") ? "memory cap " + label : label;
}

// All rows of one cap. Recomputation only adds work to a fixed order, so a schedule that fits
// without it gains nothing from a policy, and one whose makespan without recomputation is
// already above the best plan found cannot win with the ILP's plan: both are skipped. Each
// (schedule, recomputation policy) pair is a step of `progress`.
std::vector<Row> rank_cap(const ScenarioInput &base, const std::vector<std::string> &names,
                          const std::vector<std::string> &policies,
                          const std::optional<double> &cap, bool timelines,
                          ProgressCounter &progress, int &skipped) {
  std::vector<Row> rows;
  const bool with_none = std::find(policies.begin(), policies.end(), "none") != policies.end();
  std::vector<Row> plain;
  for (const std::string &name : names)
    plain.push_back(evaluate(base, name, "none", cap, timelines));
  std::vector<const Row *> candidates; // runs over the cap, fastest first
  for (const Row &row : plain) {
    if (row.simulation && !row.fits())
      candidates.push_back(&row);
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const Row *a, const Row *b) { return ranks_before(*a, *b); });
  std::optional<Rational> best; // in time units: each schedule has its own tick scale
  const auto consider = [&](Row row) {
    if (row.fits() && (!best || row.makespan() < *best))
      best = row.makespan();
    rows.push_back(std::move(row));
  };
  for (const Row &row : plain) {
    if (with_none || !row.simulation || row.fits()) {
      Row copy = row;
      consider(std::move(copy));
    }
  }
  const std::string label = cap_label(base, cap);
  progress.steps_done((names.size() - candidates.size()) * recomputing_count(policies),
                      fmt::format("{}: {} schedules fit as they are or cannot run", label,
                                  names.size() - candidates.size()));
  // Two candidates at a time (each solve runs in its own process), in a fixed order, so the
  // pruning and the result do not depend on the machine's thread count.
  constexpr std::size_t kBatch = 2;
  for (const std::string &policy : policies) {
    if (policy == "none")
      continue;
    std::size_t not_tried = 0;
    for (std::size_t k = 0; k < candidates.size(); k += kBatch) {
      std::vector<const Row *> batch;
      for (std::size_t i = k; i < std::min(k + kBatch, candidates.size()); ++i) {
        const Row &without = *candidates[i];
        if (best && !(without.makespan() < *best)) {
          ++not_tried;
          continue;
        }
        batch.push_back(&without);
      }
      std::vector<Row> done(batch.size());
      run_pair(batch.size(), [&](std::size_t i) {
        done[i] = evaluate(base, batch[i]->schedule, policy, cap, timelines, batch[i]->run);
        progress.step_done(fmt::format("{} + {}, {}", batch[i]->schedule, policy, label));
      });
      for (Row &row : done)
        consider(std::move(row));
    }
    skipped += static_cast<int>(not_tried);
    progress.steps_done(not_tried,
                        fmt::format("{}, {}: {} schedules not tried", policy, label, not_tried));
  }
  std::stable_sort(rows.begin(), rows.end(), ranks_before);
  return rows;
}

void print_table(const std::vector<Row> &rows, bool byte_peaks, std::ostream &out) {
  const std::string line =
      "{:<16} {:<9} {:>10} {:>10} {:>7} {:>8} {:>9} {:>7} {:>5} {:>10} {:>7}\n";
  out << fmt::vformat(line,
                      fmt::make_format_args("schedule", "remat", "makespan", "max span", "bubble",
                                            "span bub", byte_peaks ? "peak GiB" : "peak act",
                                            "recomp", "fits", "bound", "gap"));
  for (const Row &row : rows) {
    if (!row.simulation) {
      out << fmt::format("{:<16} {:<9} n/a: {}\n", row.schedule, row.policy, row.unavailable);
      continue;
    }
    const Metrics &metrics = row.simulation->metrics;
    const TimeScale &scale = row.run->scenario.time_scale;
    const std::optional<Ticks> bound = valid_bound(row);
    const std::string peak =
        byte_peaks ? format_readable(metrics.max_peak_bytes().value_or(0) / kBytesPerGiB)
                   : format_readable(metrics.max_peak_activations());
    out << fmt::vformat(
        line,
        fmt::make_format_args(
            row.schedule, row.policy, scale.readable(metrics.makespan),
            scale.readable(metrics.max_span), fmt::format("{:.2f}%", 100 * metrics.bubble_ratio),
            fmt::format("{:.2f}%", 100 * metrics.span_bubble_ratio), peak,
            recompute_ops(row.run->schedule), row.fits() ? "yes" : "no",
            bound ? scale.readable(*bound) : "-",
            bound ? fmt::format("{:.2f}%", 100 * makespan_gap(metrics.makespan, *row.bounds))
                  : "-"));
  }
}

// The winner in words: its gap to the bound and the two largest causes of idle time.
std::string winner_text(const Row &row, const std::string &time_unit) {
  const Scenario &scenario = row.run->scenario;
  const TimeScale &scale = scenario.time_scale;
  const Metrics &metrics = row.simulation->metrics;
  std::string text =
      fmt::format("winner: {}{}, makespan {} {}", row.schedule,
                  row.policy == "none" ? ""
                                       : fmt::format(" with {} recomputation ({} ops)", row.policy,
                                                     recompute_ops(row.run->schedule)),
                  scale.readable(metrics.makespan), time_unit);
  if (const std::optional<Ticks> bound = valid_bound(row)) {
    text += fmt::format(", {:.2f}% above the lower bound {} {}",
                        100 * makespan_gap(metrics.makespan, *row.bounds), scale.readable(*bound),
                        time_unit);
  }
  text += "\n";
  if (!scenario.stage_layers.empty())
    text += fmt::format("its layers per stage: {}\n", fmt::join(scenario.stage_layers, " "));
  BubbleExplanation explanation =
      explain_bubbles(scenario, row.run->schedule, row.simulation->timing);
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
void warn_if_unfair(const ScenarioInput &base, const std::vector<Row> &rows, std::ostream &err) {
  if (base.costs_per_device || !base.costs_file.empty())
    return;
  int fewest = 0;
  int most = 0;
  for (const Row &row : rows) {
    if (!row.run)
      continue;
    const int chunks = row.run->scenario.chunks;
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

// The interactive page of every ranking (docs/report.md): the rows as the tables print them.
std::string report_of(const ScenarioInput &base, const std::vector<std::optional<double>> &caps,
                      const std::vector<std::vector<Row>> &tables) {
  std::vector<ReportTable> report_tables;
  for (std::size_t k = 0; k < tables.size(); ++k) {
    ReportTable table{cap_heading(base, caps[k]), {}};
    for (const Row &row : tables[k]) {
      table.rows.push_back(
          row.simulation ? report_run_json(SimulationReport{row.run->scenario, row.run->schedule,
                                                            *row.simulation, valid_bound(row),
                                                            row.run->warnings},
                                           row.policy)
                         : report_unavailable_json(row.schedule, row.policy, row.unavailable));
    }
    report_tables.push_back(std::move(table));
  }
  return report_page(report_data_json(
      ReportHeader{"compare", base.model_name, base.devices, base.microbatches, base.time_unit},
      report_tables));
}

// The base order of a run as a PyTorch pipelining CSV (PyTorch has no recomputation actions: the
// plan file carries them), or nothing when PyTorch cannot express the schedule (two pipes).
std::optional<TorchCsvExport> torch_export(const Row &row) {
  ScenarioInput plain = row.run->input;
  plain.remat_policy = "none";
  try {
    const PreparedRun base_run = prepare_run(plain);
    return write_torch_csv(base_run.scenario, base_run.schedule);
  } catch (const Error &) {
    return std::nullopt;
  }
}

// The run whose files are written: the fastest that fits and can be written as asked. A
// two-pipe DualPipe has no PyTorch form and selective recomputation no per-(s,j) plan, so when
// the winner is one of them the files describe the fastest run that has both.
struct TakeAway {
  const Row *row = nullptr;
  std::optional<TorchCsvExport> torch;
};

TakeAway take_away(const std::vector<Row> &rows, bool plan, bool torch) {
  for (const Row &row : rows) {
    if (!row.fits() || (plan && row.policy == "selective"))
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
      "memory caps K to compare under")("time-limit", po::value<double>()->value_name("S"),
                                        "seconds per ILP solve (default: remat.time_limit)")(
      "format", po::value<std::string>()->default_value("text"), "text or csv")(
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
  const std::string format = checked_choice(values, "format", {"text", "csv"});
  ScenarioInput base = scenario_from_options(values);
  // Output files that cannot be written are refused before a minute of ranking is printed.
  check_outputs(given_outputs(values, {"svg", "plan", "torch-csv", "report"}),
                scenario_input_files(values, base));
  if (values.count("time-limit")) {
    base.remat_time_limit_seconds = values["time-limit"].as<double>();
    if (!(base.remat_time_limit_seconds > 0))
      throw Error("", 0, "--time-limit", "expected a positive number of seconds");
  }
  std::vector<std::string> names;
  if (values.count("schedules")) {
    names = split_list(values["schedules"].as<std::string>());
    if (names.empty())
      throw Error("", 0, "--schedules", "expected at least one schedule name");
    for (const std::string &name : names)
      check_schedule_option(name, "--schedules");
  } else {
    for (const ScheduleInfo &info : schedule_registry())
      names.push_back(info.name);
  }
  std::vector<std::optional<double>> caps{base.cap_activations};
  if (values.count("caps")) {
    caps.clear();
    for (const std::string &text : split_list(values["caps"].as<std::string>())) {
      ScenarioInput probe;
      set_scenario_field_from_text(probe, "cluster.K", text, {"", 0, "--caps"});
      caps.push_back(probe.cap_activations);
    }
    if (caps.empty())
      throw Error("", 0, "--caps", "expected at least one cap K, as K1,K2,...");
  }
  const bool capped =
      base.budget_bytes ||
      std::any_of(caps.begin(), caps.end(), [](const auto &cap) { return cap.has_value(); });
  const std::vector<std::string> policies = policies_for(base, capped);
  const bool quiet = values["quiet"].as<bool>();
  Progress progress(err, progress_mode(values, err), "compare", "runs");
  ProgressCounter counter(progress.callback(),
                          caps.size() * names.size() * recomputing_count(policies));

  std::vector<std::vector<Row>> tables;
  int skipped = 0;
  const bool timelines = values.count("svg") || values.count("report");
  for (const std::optional<double> &cap : caps)
    tables.push_back(rank_cap(base, names, policies, cap, timelines, counter, skipped));
  progress.clear();
  warn_if_unfair(base, tables.front(), err);
  // The winner: the fastest run that fits the first cap. Outputs are checked before anything
  // is printed or written.
  const std::vector<Row> &first = tables.front();
  const auto winner =
      std::find_if(first.begin(), first.end(), [](const Row &row) { return row.fits(); });
  const bool wants_plan = values.count("plan") > 0;
  const bool wants_torch = values.count("torch-csv") > 0;
  const bool wants_files = values.count("svg") || wants_plan || wants_torch;
  if (wants_files && winner == first.end()) {
    throw Error(
        "no schedule and recomputation policy fits the memory cap, so there is nothing to write");
  }
  const TakeAway chosen = wants_files ? take_away(first, wants_plan, wants_torch) : TakeAway{};
  if (wants_files && chosen.row == nullptr) {
    throw Error("no run that fits the memory cap has a PyTorch schedule and a per-microbatch plan "
                "to write");
  }
  if (winner == first.end() && base.budget_bytes && base.memory_model == MemoryModel::bytes) {
    double least = std::numeric_limits<double>::infinity();
    for (const Row &row : first) {
      if (row.simulation)
        least = std::min(least, row.simulation->metrics.max_peak_bytes().value_or(least));
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
    for (const std::vector<Row> &rows : tables) {
      for (const Row &row : rows) {
        if (row.simulation) {
          const SimulationReport report{
              row.run->scenario, row.run->schedule, *row.simulation, valid_bound(row), {}};
          out << cap_text(row.cap) << "," << row.policy << "," << report_csv_row(report) << ",\n";
        } else {
          out << fmt::format("{},{},{},{},{},,,,,,,,,,,,\"{}\"\n", cap_text(row.cap), row.policy,
                             row.schedule, base.devices, base.microbatches, row.unavailable);
        }
      }
    }
  } else {
    for (std::size_t k = 0; k < tables.size(); ++k) {
      out << fmt::format("{}{}{}  (p={} m={})\n", k == 0 ? "" : "\n",
                         base.model_name.empty() ? "" : fmt::format("model {}  ", base.model_name),
                         cap_heading(base, caps[k]), base.devices, base.microbatches);
      print_table(tables[k], byte_peaks, out);
    }
    if (base.memory_model == MemoryModel::bytes && base.budget_bytes && !base.cap_activations) {
      out << fmt::format("the bounds know no byte budget: a gap includes what fitting {} costs\n",
                         format_bytes(*base.budget_bytes));
    }
    if (skipped > 0) {
      out << fmt::format("\n{} (schedule, policy) pairs not tried: their makespan without "
                         "recomputation is already "
                         "above the winner's\n",
                         skipped);
    }
    if (winner != first.end())
      out << "\n" << winner_text(*winner, base.time_unit);
  }
  std::size_t runs = 0;
  for (const std::vector<Row> &rows : tables)
    runs += rows.size();
  std::vector<std::string> written{fmt::format("the ranking of {} runs to standard output", runs)};
  if (values.count("report")) {
    const std::string path = values["report"].as<std::string>();
    write_file_atomically(path, report_of(base, caps, tables));
    if (format == "text")
      out << fmt::format("interactive report written to {}\n", path);
    written.push_back(fmt::format("the interactive report to {}", path));
  }
  if (!wants_files) {
    progress.finish(fmt::format("{}", fmt::join(written, ", ")));
    return kOk;
  }
  const Row &best = *chosen.row;
  if (&best != &*winner && format == "text") {
    out << fmt::format(
        "{} {} has no {}; the files below are for {}{}, the fastest run that has (makespan {} {}, "
        "+{:.2f}%)\n",
        winner->schedule, winner->policy == "none" ? "" : "+ " + winner->policy,
        wants_torch && !torch_export(*winner) ? "PyTorch pipelining form" : "per-microbatch plan",
        best.schedule, best.policy == "none" ? "" : " + " + best.policy,
        best.run->scenario.time_scale.readable(best.simulation->metrics.makespan), base.time_unit,
        100 * (to_double(best.makespan()) / to_double(winner->makespan()) - 1));
  }
  if (chosen.torch) {
    for (const std::string &warning : chosen.torch->warnings)
      err << fmt::format("ppsim: warning: {}\n", warning);
  }
  const auto note = [&](const std::string &what, const std::string &path) {
    if (format == "text")
      out << fmt::format("{} of {} written to {}\n", what, best.schedule, path);
    written.push_back(fmt::format("the {} to {}", what, path));
  };
  if (values.count("svg")) {
    write_file_atomically(values["svg"].as<std::string>(),
                          gantt_svg(best.run->scenario, best.run->schedule, *best.simulation,
                                    GanttOptions{.time_unit = base.time_unit}));
    note("Gantt chart", values["svg"].as<std::string>());
  }
  if (values.count("plan")) {
    const RematPlan plan = plan_of(best.run->schedule, best.run->scenario.stage_count(),
                                   best.run->scenario.microbatches);
    write_file_atomically(values["plan"].as<std::string>(), format_plan_csv(plan));
    note("recomputation plan", values["plan"].as<std::string>());
  }
  if (chosen.torch) {
    write_file_atomically(values["torch-csv"].as<std::string>(), chosen.torch->text);
    note("PyTorch schedule", values["torch-csv"].as<std::string>());
  }
  progress.finish(fmt::format("{}", fmt::join(written, ", ")));
  return kOk;
}

} // namespace ppsim::cli
