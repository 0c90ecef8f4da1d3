// `ppsim partition`: split a per-layer cost file into stages (docs/partition.md), balanced by
// time under the per-device memory budget, or recomputation-aware.
#include "cli/commands.h"
#include "cli/lynx_options.h"
#include "cli/progress.h"
#include "cli/scenario_options.h"

#include "base/decimal.h"
#include "base/error.h"
#include "costs/stage_sums.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <ostream>

namespace ppsim::cli {
namespace po = boost::program_options;

int run_partition(const Args &args, std::ostream &out, std::ostream &err) {
  po::options_description options("ppsim partition COSTS --stages P [options]");
  options.add_options()("help,h", "show this help")(
      "mode", po::value<std::string>()->default_value("balanced"), "balanced or remat-aware")(
      "format", po::value<std::string>()->default_value("text"), "text or json");
  add_quiet_option(options);
  po::positional_options_description positional;
  add_lynx_options(options, positional);
  const po::variables_map values = parse_command(args, options, positional);
  if (values.count("help")) {
    out << options << "\n"
        << "Splits the layers of COSTS into consecutive stages minimising the slowest stage\n"
        << "(F + B + W, plus exposed recomputation under reconstructed Lynx HEU when\n"
        << "remat-aware), with each stage's memory under --memory at its in-flight count.\n";
    return kOk;
  }
  const std::string format = checked_choice(values, "format", {"text", "json"});
  PartitionOptions partition_options = lynx_options_from(values);
  partition_options.mode = checked_choice(values, "mode", {"balanced", "remat-aware"}) == "balanced"
                               ? PartitionMode::balanced
                               : PartitionMode::remat_aware;
  const CostFile costs = read_cost_file(values["costs"].as<std::string>());
  // Remat-aware stages grow about as L^3.5 (docs/partition.md): a long run says how far it is.
  Progress progress(err, progress_mode(values, err), "partition", "stages");
  partition_options.progress = progress.callback();
  // More stages than layers is the option's fault, said as checkpoint says it.
  located_at(values["costs"].as<std::string>(), "--stages",
             [&] { even_layer_counts(costs.rows.size(), partition_options.stages); });
  const Partition partition = partition_costs(costs, partition_options);
  progress.clear();
  const std::string written =
      fmt::format("the partition into {} stages to standard output", partition_options.stages);

  if (format == "json") {
    out << fmt::format("{{\"mode\": \"{}\", \"schedule\": \"{}\", \"layers_per_stage\": [{}], "
                       "\"stage_ms\": [{}], \"bottleneck_ms\": {}}}\n",
                       values["mode"].as<std::string>(), partition_options.schedule,
                       fmt::join(partition.layers_per_stage, ", "),
                       fmt::join(partition.stage_ms, ", "), partition.bottleneck_ms);
    progress.finish(written);
    return kOk;
  }
  out << fmt::format("partition of {} layers into {} stages: schedule {}, {}\n", costs.rows.size(),
                     partition_options.stages, partition_options.schedule,
                     values["mode"].as<std::string>());
  out << fmt::format("{:>5}  {:>5}  {:>6}  {:>9}  {:>10}\n", "stage", "first", "layers",
                     "in-flight", "time_ms");
  for (int k = 0, first = 0; k < partition_options.stages;
       first += partition.layers_per_stage[k], ++k) {
    out << fmt::format("{:>5}  {:>5}  {:>6}  {:>9}  {:>10}\n", k, first,
                       partition.layers_per_stage[k], stage_in_flight(partition_options, k),
                       format_readable(partition.stage_ms[k]));
  }
  out << fmt::format("bottleneck {} ms\n", format_readable(partition.bottleneck_ms));
  out << fmt::format("partition = [{}]\n", fmt::join(partition.layers_per_stage, ", "));
  progress.finish(written);
  return kOk;
}

} // namespace ppsim::cli
