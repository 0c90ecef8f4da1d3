#include "cli/scenario_options.h"

#include "base/error.h"
#include "run/policy.h"
#include "run/prepare.h"
#include "run/scenario_file.h"
#include "sim/schedules/registry.h"

#include <fmt/format.h>
#include <ostream>

namespace ppsim::cli {
namespace po = boost::program_options;
namespace {

struct FieldFlag {
  const char *flag;  // program_options spelling ("devices,p": --devices and -p; "F": --F)
  const char *shown; // as the user types it, for errors
  const char *field; // dotted scenario field
  const char *help;
};

constexpr FieldFlag kFieldFlags[] = {
    {"schedule", "--schedule", "pipeline.schedule", "schedule name (see 'ppsim schedules')"},
    {"schedule-file", "--schedule-file", "pipeline.schedule_file",
     "PyTorch CSV schedule to import instead"},
    {"devices,p", "-p", "cluster.devices", "number of devices"},
    {"microbatches,m", "-m", "pipeline.microbatches", "number of microbatches"},
    {"microbatch-size", "--microbatch-size", "pipeline.microbatch_size",
     "samples per microbatch b: the size the cost files are read at"},
    {"chunks,v", "-v", "pipeline.chunks", "chunks (stages) per device"},
    {"group-size", "--group-size", "pipeline.group_size",
     "interleaved microbatch group size (default PyTorch's: m / max(1, m div p))"},
    {"F", "--F", "model.F", "forward time per stage (number, \"1/6\" or a list)"},
    {"B", "--B", "model.B", "input-gradient backward time per stage"},
    {"W", "--W", "model.W",
     "weight-gradient backward time per stage (0 if only the full backward is known)"},
    {"R", "--R", "model.R", "recomputation time per stage (default F)"},
    {"cost-unit", "--cost-unit", "model.cost_unit",
     "\"device\" (default: one device's share, split over its v chunks) or \"stage\""},
    {"comm", "--comm", "cluster.link.latency", "point-to-point latency between devices"},
    {"bandwidth", "--bandwidth", "cluster.link.bandwidth",
     "link bandwidth such as 50GB/s (with out_bytes)"},
    {"gpus-per-node", "--gpus-per-node", "cluster.gpus_per_node",
     "devices per node: boundaries between nodes take the inter-node link"},
    {"inter-node-comm", "--inter-node-comm", "cluster.inter_node_link.latency",
     "point-to-point latency between devices of different nodes"},
    {"inter-node-bandwidth", "--inter-node-bandwidth", "cluster.inter_node_link.bandwidth",
     "inter-node link bandwidth such as 25GB/s (with out_bytes)"},
    {"op-overhead", "--op-overhead", "cluster.op_overhead",
     "the runtime's own time per F, B, W or BW action (bench/torch_fidelity.py measures it)"},
    {"runtime", "--runtime", "cluster.runtime",
     "ideal, torch or megatron: whether sends block and links serialize (docs/model.md)"},
    {"w-stash", "--w-stash", "model.w_stash", "fraction of an activation that B keeps for W"},
    {"K", "--K", "cluster.K",
     "activation memory cap (count model, one device's share of a microbatch)"},
    {"memory", "--memory", "cluster.memory", "memory budget in bytes such as 80GiB"},
    {"memory-model", "--memory-model", "cluster.memory_model", "count, zb or bytes"},
    {"overlap-fb", "--overlap-fb", "pipeline.overlap_fb",
     "duration of an overlapped F&B op (DualPipe)"},
    {"remat", "--remat", "remat.policy", "recomputation policy"},
    {"remat-timing", "--remat-timing", "remat.timing", "early or lumped"},
    {"node-limit", "--node-limit", "remat.node_limit",
     "branch-and-bound nodes per ILP solve (0: none): the same result on any machine"},
    {"checkpoint-levels", "--checkpoint-levels", "remat.checkpoint_levels",
     "with a per-layer cost file: up to N (0-8) rotor checkpoint levels per stage for the remat "
     "ILP"},
};

} // namespace

void add_scenario_options(po::options_description &options) {
  for (const FieldFlag &flag : kFieldFlags) {
    options.add_options()(flag.flag, po::value<std::string>()->value_name("X"), flag.help);
  }
  options.add_options()("contention", po::bool_switch(),
                        "links carry one transfer at a time per direction")(
      "blocking", po::bool_switch(), "a transfer also occupies the sending device")(
      "set", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
      "set any scenario field, e.g. --set cluster.link.latency=0.5");
}

void add_scenario_positional(po::options_description &options,
                             po::positional_options_description &positional) {
  options.add_options()("scenario", po::value<std::string>()->value_name("SCENARIO.toml"),
                        "scenario file");
  positional.add("scenario", 1);
}

std::vector<std::string> scenario_input_files(const po::variables_map &values,
                                              const RunInput &input) {
  std::vector<std::string> files{input.schedule_file};
  files.insert(files.end(), input.costs_files.begin(), input.costs_files.end());
  if (values.count("scenario"))
    files.push_back(values["scenario"].as<std::string>());
  constexpr std::string_view kPlanFile = "file:";
  if (input.remat_policy.starts_with(kPlanFile))
    files.push_back(input.remat_policy.substr(kPlanFile.size()));
  return files;
}

RunInput scenario_from_options(const po::variables_map &values) {
  RunInput input;
  if (values.count("scenario"))
    input = read_scenario_file(values["scenario"].as<std::string>());
  for (const FieldFlag &flag : kFieldFlags) {
    const std::string name = std::string(flag.flag).substr(0, std::string(flag.flag).find(','));
    if (values.count(name)) {
      set_scenario_field_from_text(input, flag.field, values[name].as<std::string>(),
                                   SourceLocation{"", 0, flag.shown});
    }
  }
  if (values["contention"].as<bool>()) {
    set_scenario_field_from_text(input, "cluster.link.contention", "true", {"", 0, "--contention"});
  }
  if (values["blocking"].as<bool>()) {
    set_scenario_field_from_text(input, "cluster.link.blocking", "true", {"", 0, "--blocking"});
  }
  if (values.count("set")) {
    for (const std::string &assignment : values["set"].as<std::vector<std::string>>()) {
      const auto equals = assignment.find('=');
      if (equals == std::string::npos || equals == 0) {
        throw Error("", 0, "--set", fmt::format("expected KEY=VALUE, got \"{}\"",
                                                cut_for_message(assignment)));
      }
      const std::string key = assignment.substr(0, equals);
      set_scenario_field_from_text(input, key, assignment.substr(equals + 1), {"", 0, key});
    }
  }
  // Before any run: a ranking would report the refusal run by run.
  if (input.remat_checkpoint_levels > 0 && input.costs_files.empty())
    input.fail("remat.checkpoint_levels", kLevelsNeedCostFile);
  load_cost_file(input); // read once for the whole command; a missing file stops it here
  return input;
}

po::variables_map parse_command(const std::vector<std::string> &args,
                                const po::options_description &options,
                                const po::positional_options_description &positional) {
  po::variables_map values;
  po::store(po::command_line_parser(args).options(options).positional(positional).run(), values);
  // --help answers alone: required options are checked only when the command runs.
  if (!values.count("help"))
    po::notify(values);
  return values;
}

std::optional<po::variables_map> parse_file_command(const std::vector<std::string> &args,
                                                    const po::options_description &options,
                                                    const char *file_option, std::ostream &out) {
  po::positional_options_description positional;
  positional.add(file_option, 1);
  po::variables_map values = parse_command(args, options, positional);
  if (values.count("help")) {
    out << options << "\n";
    return std::nullopt;
  }
  return values;
}

std::optional<po::variables_map> parse_scenario_command(const std::vector<std::string> &args,
                                                        po::options_description &options,
                                                        std::ostream &out) {
  options.add_options()("help,h", "show this help");
  add_scenario_options(options);
  po::positional_options_description positional;
  add_scenario_positional(options, positional);
  po::variables_map values = parse_command(args, options, positional);
  if (values.count("help")) {
    out << options << "\n";
    return std::nullopt;
  }
  return values;
}

std::int64_t checked_integer(const po::variables_map &values, const std::string &name,
                             std::int64_t low, std::int64_t high) {
  const std::int64_t value = values[name].as<std::int64_t>();
  if (value < low || value > high)
    throw Error("", 0, "--" + name,
                fmt::format("expected an integer from {} to {}, got {}", low, high, value));
  return value;
}

std::string checked_choice(const po::variables_map &values, const std::string &name,
                           std::initializer_list<const char *> allowed) {
  const std::string value = values[name].as<std::string>();
  for (const char *option : allowed) {
    if (value == option)
      return value;
  }
  const std::vector<std::string> names(allowed.begin(), allowed.end());
  const std::string listed =
      names.size() == 1
          ? names.front()
          : fmt::format("{} or {}", fmt::join(names.begin(), names.end() - 1, ", "), names.back());
  throw Error("", 0, "--" + name, fmt::format("expected {}, got \"{}\"",
                                              listed, cut_for_message(value)));
}

void check_schedule_option(const std::string &name, const std::string &option) {
  located_at("", option, [&] { find_schedule(name); });
}

} // namespace ppsim::cli
