// `ppsim lynx`: on-demand recomputation vs reconstructed Lynx HEU vs the MILP optimum, per stage
// and overall (docs/lynx.md, "The model"), for a cost file split into stages.
#include "base/index.h"
#include "cli/commands.h"
#include "cli/lynx_options.h"
#include "cli/scenario_options.h"
#include "costs/stage_sums.h"
#include "run/prepare.h"

#include "base/decimal.h"
#include "base/error.h"
#include "run/prepare.h"
#include "sim/metrics.h"
#include "sim/schedules/registry.h"

#include <algorithm>
#include <cmath>
#include "sim/io/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>

namespace ppsim::cli {
namespace po = boost::program_options;

void add_lynx_options(po::options_description &options,
                      po::positional_options_description &positional) {
  options.add_options()("costs", po::value<std::string>()->required(),
                        "per-layer cost file (CSV or JSON)")("stages", po::value<int>()->required(),
                                                             "pipeline stages p")(
      "schedule", po::value<std::string>()->default_value("1f1b"),
      "in-flight counts: 1f1b, 1f1b-split, zb-h1, zb-h2 or v-half")(
      "memory", po::value<std::string>()->value_name("SIZE"),
      "per-device memory such as 80GiB (weights, gradients, optimizer states, activations); none "
      "by default")("optimizer-shards", po::value<int>()->default_value(1),
                    "data-parallel ranks the optimizer states are sharded over (ZeRO-1)")(
      "tp", po::value<int>()->default_value(1), "tensor-parallel degree (TP windows when > 1)")(
      "tp-bandwidth", po::value<double>()->default_value(100), "TP all-reduce bus bandwidth, GB/s")(
      "p2p-bandwidth", po::value<double>()->default_value(25), "pipeline link bandwidth, GB/s")(
      "bubble-ms", po::value<double>()->default_value(0), "idle wait before each backward, ms")(
      "microbatches", po::value<int>(),
      "run the schedule once with this many microbatches to measure each stage's in-flight count "
      "(any schedule with one stage per device) and, for lynx, its bubble (replaces --bubble-ms)");
  positional.add("costs", 1);
}

namespace {

// The scenario of a first run of the cost file under the schedule (--microbatches).
RunInput first_run_input(const po::variables_map &values, const PartitionOptions &options) {
  const int microbatches = values["microbatches"].as<int>();
  if (microbatches < 1) {
    throw Error("", 0, "--microbatches",
                fmt::format("expected a positive count, got {}", microbatches));
  }
  if (!find_schedule(options.schedule).one_stage_per_device(0)) {
    throw Error("", 0, "--microbatches",
                fmt::format("a first run needs one stage per device; '{}' places several",
                            options.schedule));
  }
  RunInput input;
  input.schedule = options.schedule;
  input.devices = options.stages;
  input.microbatches = microbatches;
  input.costs_files = {values["costs"].as<std::string>()};
  return input;
}

} // namespace

PartitionOptions lynx_options_from(const po::variables_map &values) {
  PartitionOptions options;
  options.stages = values["stages"].as<int>();
  if (options.stages < 1) {
    throw Error("", 0, "--stages",
                fmt::format("expected a positive count, got {}", options.stages));
  }
  options.schedule = values["schedule"].as<std::string>();
  const ScheduleInfo *schedule = nullptr;
  try {
    schedule = &find_schedule(options.schedule);
  } catch (const Error &error) {
    throw Error("", 0, "--schedule", error.sentence());
  }
  if (values.count("microbatches")) {
    options.in_flight = measured_in_flight(first_run_input(values, options));
  } else if (!schedule->in_flight) {
    throw Error(
        "", 0, "--schedule",
        fmt::format(
            "schedule '{}' has no in-flight count formula; --microbatches M measures it on a "
            "first run",
            options.schedule));
  }
  if (values.count("memory")) {
    const std::string text = values["memory"].as<std::string>();
    const std::optional<double> bytes = parse_byte_size(text);
    if (!bytes || !(*bytes > 0)) {
      throw Error("", 0, "--memory",
                  fmt::format("expected a byte size such as 80GiB, got \"{}\"",
                              cut_for_message(text)));
    }
    options.budget_bytes = *bytes;
  }
  options.optimizer_shards = values["optimizer-shards"].as<int>();
  if (options.optimizer_shards < 1) {
    throw Error(
        "", 0, "--optimizer-shards",
        fmt::format("expected at least 1 data-parallel rank, got {}", options.optimizer_shards));
  }
  options.windows.tp = values["tp"].as<int>();
  options.windows.tp_bandwidth_gb_per_s = values["tp-bandwidth"].as<double>();
  options.windows.p2p_bandwidth_gb_per_s = values["p2p-bandwidth"].as<double>();
  options.windows.bubble_ms = values["bubble-ms"].as<double>();
  if (!std::isfinite(options.windows.bubble_ms) || options.windows.bubble_ms < 0) {
    throw Error("", 0, "--bubble-ms",
                fmt::format("expected a finite non-negative number of ms, got {}",
                            options.windows.bubble_ms));
  }
  for (const char *name : {"tp-bandwidth", "p2p-bandwidth"}) {
    if (!(values[name].as<double>() > 0)) {
      throw Error("", 0, fmt::format("--{}", name),
                  fmt::format("expected a positive bandwidth, got {}", values[name].as<double>()));
    }
  }
  if (options.windows.tp < 1) {
    throw Error("", 0, "--tp",
                fmt::format("expected a positive degree, got {}", options.windows.tp));
  }
  return options;
}

namespace {

std::vector<int> parse_layer_list(const std::string &text) {
  std::vector<int> counts;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    try {
      std::size_t used = 0;
      counts.push_back(std::stoi(item, &used));
      if (used != item.size())
        throw std::invalid_argument(item);
    } catch (const std::logic_error &) {
      throw Error("", 0, "--layers-per-stage",
                  fmt::format("expected comma-separated counts, got \"{}\"",
                              cut_for_message(text)));
    }
  }
  return counts;
}

// The idle wait before each stage's backward in a first run of the split (docs/lynx.md, "The
// model": window capacities "taken from a first simulation"), in ms. Links are free in that run:
// the pipeline window adds the P2P transfer itself.
std::vector<double> measured_bubbles(const po::variables_map &values,
                                     const PartitionOptions &options,
                                     const std::vector<int> &layers) {
  RunInput input = first_run_input(values, options);
  input.layers_per_stage = layers;
  const PreparedRun run = prepare_run(input);
  const Simulation simulation = simulate(run.scenario, run.schedule);
  return mean_wait_before_backward(run.scenario, run.schedule, simulation.timing);
}

std::string json_list(const std::vector<double> &values) {
  std::vector<std::string> numbers;
  for (const double value : values)
    numbers.push_back(json_number(value));
  return fmt::format("[{}]", fmt::join(numbers, ", "));
}

std::string cell(const std::optional<double> &value) {
  return value ? format_readable(*value) : std::string("-");
}

} // namespace

int run_lynx(const Args &args, std::ostream &printed, std::ostream & /*err*/) {
  po::options_description options("ppsim lynx COSTS --stages P [options]");
  options.add_options()("help,h", "show this help")("layers-per-stage", po::value<std::string>(),
                                                    "e.g. 3,3,2 (default: balanced by time)")(
      "milp-seconds", po::value<double>()->default_value(10), "time limit of each stage's MILP")(
      "format", po::value<std::string>()->default_value("text"), "text or json");
  po::positional_options_description positional;
  add_lynx_options(options, positional);
  const po::variables_map values = parse_command(args, options, positional);
  if (values.count("help")) {
    printed
        << options << "\n"
        << "Per stage: exposed recomputation (ms) of the drop set HEU picks for the memory "
           "budget,\n"
        << "recomputed on demand, placed by HEU in communication windows, and placed by the MILP\n"
        << "(which also picks the drop set). The overall row is the slowest stage's time.\n";
    return kOk;
  }
  const bool json = checked_choice(values, "format", {"text", "json"}) == "json";
  PartitionOptions lynx_options = lynx_options_from(values);
  const CostFile costs = read_cost_file(values["costs"].as<std::string>());
  std::vector<int> layers;
  if (values.count("layers-per-stage")) {
    layers = parse_layer_list(values["layers-per-stage"].as<std::string>());
    aggregate_stages(costs, layers); // validates the counts
    if (static_cast<int>(layers.size()) != lynx_options.stages) {
      throw Error("", 0, "--layers-per-stage",
                  fmt::format("expected {} counts, got {}", lynx_options.stages, layers.size()));
    }
  } else {
    PartitionOptions by_time = lynx_options;
    by_time.budget_bytes = std::numeric_limits<double>::infinity();
    layers = partition_costs(costs, by_time).layers_per_stage;
  }
  const double milp_seconds = values["milp-seconds"].as<double>();
  if (!(milp_seconds > 0 && milp_seconds <= 1e6))
    throw Error("", 0, "--milp-seconds",
                fmt::format("expected a number of seconds above 0 and at most 1000000, got {}",
                            milp_seconds));
  const solver::Options milp_options{.time_limit_seconds = milp_seconds};
  std::vector<double> bubbles(at(lynx_options.stages), lynx_options.windows.bubble_ms);
  if (values.count("microbatches")) {
    bubbles = measured_bubbles(values, lynx_options, layers);
  }

  // Dropping every activation is the least a stage can hold. A budget below that in every stage
  // leaves every cell '-': refused before any MILP runs (a stage that alone does not fit is a
  // row of '-', the others still informative).
  if (values.count("memory")) {
    std::optional<double> least_need;
    int least_stage = 0;
    for (int k = 0, first = 0; k < lynx_options.stages; first += layers[k], ++k) {
      PartitionOptions stage_options = lynx_options;
      stage_options.windows.bubble_ms = bubbles[at(k)];
      const OverlapProblem problem = stage_model(costs, stage_options, k, first, layers[k]).problem;
      OverlapPlan dropped;
      dropped.placement.assign(problem.tensors.size(), Placement::on_demand);
      dropped.window.assign(problem.tensors.size(), -1);
      const double need = evaluate(problem, dropped).peak_bytes;
      if (!least_need || need < *least_need) {
        least_need = need;
        least_stage = k;
      }
    }
    if (least_need && *least_need > lynx_options.budget_bytes) {
      throw Error(
          "", 0, "--memory",
          fmt::format(
              "{} is below what every stage holds with every activation recomputed (the least is "
              "stage {}: {})",
              values["memory"].as<std::string>(), least_stage, format_bytes(*least_need)));
    }
  }
  // The table is printed whole once every stage is solved: a failure is one line, not half a table.
  std::ostringstream out;
  out << fmt::format("reconstructed Lynx (docs/lynx.md): schedule {}, layers [{}], tp {}\n",
                     lynx_options.schedule, fmt::join(layers, ", "), lynx_options.windows.tp);
  if (values.count("microbatches")) {
    out << fmt::format("bubble before each backward, measured over {} microbatches: [{:.6g}] ms\n",
                       values["microbatches"].as<int>(), fmt::join(bubbles, ", "));
  }
  out << fmt::format("{:>7}  {:>6}  {:>9}  {:>7}  {:>10}  {:>12}  {:>10}  {:>10}\n", "stage",
                     "layers", "in-flight", "dropped", "compute_ms", "on-demand_ms", "heu_ms",
                     "milp_ms");
  std::optional<double> slowest_demand = 0, slowest_heu = 0, slowest_milp = 0;
  const auto slowest = [](std::optional<double> &total, double compute,
                          std::optional<double> exposed) {
    total = total && exposed ? std::optional<double>(std::max(*total, compute + *exposed))
                             : std::nullopt;
  };
  double slowest_compute = 0;
  const auto json_cell = [](const std::optional<double> &value) {
    return value ? json_number(*value) : std::string("null");
  };
  std::vector<std::string> stages_json;
  for (int k = 0, first = 0; k < lynx_options.stages; first += layers[k], ++k) {
    PartitionOptions stage_options = lynx_options;
    stage_options.windows.bubble_ms = bubbles[at(k)];
    const StageModel model = stage_model(costs, stage_options, k, first, layers[k]);
    const std::optional<OverlapPlan> heuristic = lynx_heuristic(model.problem);
    const std::optional<OverlapPlan> milp = lynx_milp(model.problem, milp_options);
    std::optional<double> demand_ms, heu_ms, milp_ms;
    std::string dropped = "-";
    if (heuristic) {
      demand_ms = evaluate(model.problem, on_demand(*heuristic)).exposed_ms;
      heu_ms = evaluate(model.problem, *heuristic).exposed_ms;
      dropped =
          fmt::format("{}", std::count_if(heuristic->placement.begin(), heuristic->placement.end(),
                                          [](Placement p) { return p != Placement::keep; }));
    }
    if (milp)
      milp_ms = evaluate(model.problem, *milp).exposed_ms;
    out << fmt::format("{:>7}  {:>6}  {:>9}  {:>7}  {:>10.6g}  {:>12}  {:>10}  {:>10}\n", k,
                       layers[k], model.problem.in_flight, dropped, model.compute_ms,
                       cell(demand_ms), cell(heu_ms), cell(milp_ms));
    stages_json.push_back(fmt::format(
        "{{\"stage\": {}, \"layers\": {}, \"in_flight\": {}, \"dropped\": {}, \"compute_ms\": {}, "
        "\"on_demand_ms\": {}, \"heu_ms\": {}, \"milp_ms\": {}}}",
        k, layers[k], model.problem.in_flight, dropped == "-" ? "null" : dropped,
        json_number(model.compute_ms), json_cell(demand_ms), json_cell(heu_ms),
        json_cell(milp_ms)));
    slowest_compute = std::max(slowest_compute, model.compute_ms);
    slowest(slowest_demand, model.compute_ms, demand_ms);
    slowest(slowest_heu, model.compute_ms, heu_ms);
    slowest(slowest_milp, model.compute_ms, milp_ms);
  }
  out << fmt::format("{:>7}  {:>6}  {:>9}  {:>7}  {:>10.6g}  {:>12}  {:>10}  {:>10}\n", "overall",
                     costs.rows.size(), "", "", slowest_compute, cell(slowest_demand),
                     cell(slowest_heu), cell(slowest_milp));
  if (json) {
    printed << fmt::format(
        "{{\"schedule\": {}, \"layers_per_stage\": [{}], \"tp\": {}, \"bubbles_ms\": {}, "
        "\"stages\": [{}], \"overall\": {{\"layers\": {}, \"compute_ms\": {}, \"on_demand_ms\": "
        "{}, \"heu_ms\": {}, \"milp_ms\": {}}}}}\n",
        json_string(lynx_options.schedule), fmt::join(layers, ", "), lynx_options.windows.tp,
        values.count("microbatches") ? json_list(bubbles) : "null",
        fmt::join(stages_json, ", "), costs.rows.size(), json_number(slowest_compute),
        json_cell(slowest_demand), json_cell(slowest_heu), json_cell(slowest_milp));
    return kOk;
  }
  printed << out.str();
  return kOk;
}

} // namespace ppsim::cli
