// `ppsim checkpoint`: which layers of a pipeline stage to store, store selectively, checkpoint
// or recompute, from a per-layer cost file (rotor DP, docs/remat.md "ppsim checkpoint").
#include "base/index.h"
#include "cli/commands.h"
#include "cli/scenario_options.h"
#include "costs/stage_sums.h"

#include "base/decimal.h"
#include "base/error.h"
#include "remat/stage_checkpoint.h"
#include "run/scenario_file.h"
#include "sim/io/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <ostream>

namespace ppsim::cli {
namespace po = boost::program_options;
namespace {

std::vector<int> layer_counts(const po::variables_map &values, std::size_t layers) {
  if (!values.count("layers-per-stage"))
    return located_at(values["costs"].as<std::string>(), "--stages",
                      [&] { return even_layer_counts(layers, values["stages"].as<int>()); });
  // The scenario field model.layers_per_stage reads the list, with its own checks and errors.
  RunInput parsed;
  set_scenario_field_from_text(parsed, "model.layers_per_stage",
                               "[" + values["layers-per-stage"].as<std::string>() + "]",
                               {"", 0, "--layers-per-stage"});
  const std::vector<int> &counts = parsed.layers_per_stage;
  // Both given: they must agree, as in `ppsim lynx` (--stages was once ignored here).
  const int stages = values["stages"].as<int>();
  if (!values["stages"].defaulted() && counts.size() != static_cast<std::size_t>(stages))
    throw Error("", 0, "--layers-per-stage",
                fmt::format("expected {} counts, got {}", stages, counts.size()));
  const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  if (total != layers)
    throw Error("", 0, "--layers-per-stage",
                fmt::format("the counts add up to {}, not to the file's {} layers", total, layers));
  return counts;
}

std::string actions_text(const std::vector<LayerAction> &actions) {
  std::string text;
  for (const LayerAction action : actions)
    text += static_cast<char>(action);
  return text;
}

std::string option_row(const CheckpointOption &option, double fastest_ms) {
  const double total = option.forward_ms + option.backward_ms;
  return fmt::format("{:>12} {:>10} {:>10} {:>12} {:>8}  {}\n", format_bytes(option.peak_bytes),
                     format_readable(option.forward_ms), format_readable(option.backward_ms),
                     format_bytes(option.kept_bytes),
                     fmt::format("{:+.1f}%", 100 * (total - fastest_ms) / fastest_ms),
                     actions_text(option.actions));
}

std::string option_json(const CheckpointOption &option, int level) {
  return fmt::format("{{{}\"peak_bytes\": {}, \"forward_ms\": {}, \"backward_ms\": {}, "
                     "\"kept_bytes\": {}, \"layers\": {}}}",
                     level > 0 ? fmt::format("\"level\": {}, ", level) : "",
                     json_number(option.peak_bytes), json_number(option.forward_ms),
                     json_number(option.backward_ms), json_number(option.kept_bytes),
                     json_string(actions_text(option.actions)));
}

} // namespace

int run_checkpoint(const Args &args, std::ostream &out, std::ostream & /*err*/) {
  po::options_description options(
      "ppsim checkpoint COSTS [--stages P | --layers-per-stage A,B,..] [options]");
  options.add_options()("help,h", "show this help")(
      "costs", po::value<std::string>()->value_name("COSTS"), "per-layer cost file (CSV or JSON)")(
      "stages", po::value<int>()->default_value(1), "split the layers evenly into P stages")(
      "layers-per-stage", po::value<std::string>()->value_name("A,B,.."),
      "consecutive layers per stage")("stage", po::value<int>()->value_name("K"),
                                      "only stage K (default: every stage)")(
      "memory", po::value<std::string>()->value_name("SIZE"),
      "per-microbatch memory of the stage (e.g. 2GiB): the plan at that level; default: the whole "
      "front")("slots", po::value<int>()->default_value(500), "memory discretisation of the DP")(
      "no-selective", po::bool_switch(),
      "record layers whole only, even where selective bytes are measured")(
      "levels", po::value<int>()->value_name("N"),
      "only the N checkpoint levels `remat --checkpoint-levels N` offers the ILP, numbered")(
      "format", po::value<std::string>()->default_value("text"), "text or json");
  po::positional_options_description positional;
  positional.add("costs", 1);
  const po::variables_map values = parse_command(args, options, positional);
  if (values.count("help")) {
    out << options << "\n"
        << "For each stage, the rotor dynamic program over its layers: for every memory level the\n"
        << "stage's forward and backward time (recomputation included) and what it keeps from F\n"
        << "to B, and per layer S (store), s (store without the attention core), C (checkpoint:\n"
        << "input kept, recomputed) or R (recomputed from an earlier checkpoint).\n";
    return kOk;
  }
  if (!values.count("costs"))
    throw Error("", 0, "COSTS", "give a per-layer cost file");
  const bool json = checked_choice(values, "format", {"text", "json"}) == "json";
  const int slots = values["slots"].as<int>();
  // The DP table holds (slots + 1)(layers + 1)^2 entries of 12 bytes.
  if (slots < 1 || slots > 5000)
    throw Error("", 0, "--slots", fmt::format("expected 1 to 5000 slots, got {}", slots));
  if (values["stages"].as<int>() < 1)
    throw Error("", 0, "--stages",
                fmt::format("expected at least 1 stage, got {}", values["stages"].as<int>()));

  std::optional<double> memory;
  if (values.count("memory")) {
    const std::string text = values["memory"].as<std::string>();
    memory = parse_byte_size(text);
    if (!memory || !(*memory > 0))
      throw Error("", 0, "--memory",
                  fmt::format("expected a byte size such as 2GiB, got \"{}\"",
                              cut_for_message(text)));
  }
  const CostFile costs = read_cost_file(values["costs"].as<std::string>());
  const std::vector<int> counts = layer_counts(values, costs.rows.size());
  if (values.count("stage") && (values["stage"].as<int>() < 0 ||
                                values["stage"].as<int>() >= static_cast<int>(counts.size())))
    throw Error("", 0, "--stage",
                fmt::format("expected a stage in 0..{}, got {}", counts.size() - 1,
                            values["stage"].as<int>()));
  const bool selective = !values["no-selective"].as<bool>();
  const int levels = values.count("levels") ? values["levels"].as<int>() : 0;
  if (values.count("levels") && (levels < 1 || levels > kMaxCheckpointLevels))
    throw Error("", 0, "--levels",
                fmt::format("expected 1 to {} levels, got {}", kMaxCheckpointLevels, levels));
  if (values.count("levels") &&
      (memory || values["no-selective"].as<bool>() || values["slots"].as<int>() != 500))
    throw Error("", 0, "--levels",
                "the levels are the ILP's: give them without --memory, --no-selective or --slots");

  // Everything is computed before anything is printed: an error leaves no partial table.
  std::string report;
  std::vector<std::string> stage_objects;
  std::size_t first = 0;
  for (std::size_t s = 0; s < counts.size(); first += at(counts[s]), ++s) {
    if (values.count("stage") && static_cast<int>(s) != values["stage"].as<int>())
      continue;
    const std::vector<CostRow> layers(costs.rows.begin() + static_cast<std::ptrdiff_t>(first),
                                      costs.rows.begin() + static_cast<std::ptrdiff_t>(first) +
                                          counts[s]);
    const CheckpointOption whole = store_everything(layers);
    if (!(whole.peak_bytes > 0)) {
      throw Error(
          values["costs"].as<std::string>(), 0, "",
          fmt::format("stage {} has no activation sizes (input_bytes, activation_bytes_full): "
                      "nothing to checkpoint",
                      s));
    }
    std::vector<CheckpointOption> rows;
    if (levels > 0) {
      rows = checkpoint_levels(layers, levels);
    } else {
      // Without a level, the whole front: from above storing everything (the DP's memory rule
      // reserves more than the replay needs) down to the least memory.
      const double top = 1.5 * whole.peak_bytes;
      rows = checkpoint_front(layers, memory.value_or(top), slots, selective);
      if (rows.empty()) {
        if (!memory)
          throw Error(fmt::format(
              "stage {}: no checkpointing plan fits even the memory of storing everything", s));
        throw Error("", 0, "--memory",
                    fmt::format("stage {} cannot run in {}: even recomputing everything needs more",
                                s, format_bytes(*memory)));
      }
      if (memory)
        rows.resize(1);
    }
    const std::size_t last = first + layers.size() - 1;
    if (json) {
      std::vector<std::string> options_json;
      for (std::size_t k = 0; k < rows.size(); ++k)
        options_json.push_back(option_json(rows[k], levels > 0 ? static_cast<int>(k) + 1 : 0));
      stage_objects.push_back(fmt::format(
          "{{\"stage\": {}, \"first_layer\": {}, \"last_layer\": {}, \"store_everything\": {}, "
          "\"options\": [{}]}}",
          s, first, last, option_json(whole, 0), fmt::join(options_json, ", ")));
      continue;
    }
    const double fastest = whole.forward_ms + whole.backward_ms;
    report += fmt::format(
        "stage {}: layers {}-{}; storing everything takes F {} + B {} ms and peaks at {}\n", s,
        first, last, format_readable(whole.forward_ms), format_readable(whole.backward_ms),
        format_bytes(whole.peak_bytes));
    report += fmt::format("{}{:>12} {:>10} {:>10} {:>12} {:>8}  {}\n", levels > 0 ? "level " : "",
                          "peak", "F ms", "B ms", "kept F->B", "time", "layers");
    int number = 0;
    for (const CheckpointOption &option : rows) {
      if (levels > 0)
        report += fmt::format("{:>5} ", ++number);
      report += option_row(option, fastest);
    }
  }
  if (json)
    report = fmt::format("{{\"stages\": [{}]}}\n", fmt::join(stage_objects, ", "));
  out << report;
  return kOk;
}

} // namespace ppsim::cli
