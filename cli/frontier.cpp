// `ppsim frontier`: the bubble-versus-memory frontier of the controllable-memory building-block
// search (docs/schedules.md, "v-auto", oracle O-13) for one scenario.
#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/scenario_options.h"
#include "run/prepare.h"

#include "base/error.h"
#include "sim/schedules/registry.h"
#include "sim/schedules/v_auto.h"

#include <cmath>
#include <fmt/format.h>
#include <ostream>

namespace ppsim::cli {
namespace po = boost::program_options;

// The search's 60 starting patterns take milliseconds each at small p: a line every 10.
constexpr std::size_t kFrontierLines = 6;

int run_frontier(const Args &args, std::ostream &out, std::ostream &err) {
  po::options_description options(
      "ppsim frontier [SCENARIO.toml] [options]\n\n"
      "Prints, for every peak activation memory a V building block reaches (in chunk\n"
      "activations and in K units), the least bubble in unit slots and the best max span\n"
      "under the given costs. --K caps the peak (default: p, the 1F1B level).\n\noptions");
  options.add_options()("format", po::value<std::string>()->default_value("text"), "text or json")(
      "threads", po::value<std::int64_t>()->default_value(0), "worker threads (0 = all cores)");
  add_quiet_option(options);
  const auto parsed = parse_scenario_command(args, options, out);
  if (!parsed)
    return kOk;
  const po::variables_map &values = *parsed;
  const std::string format = checked_choice(values, "format", {"text", "json"});
  RunInput input = scenario_from_options(values);
  refuse_recomputation(input, "frontier");
  // The frontier is v-auto's building-block search: an order asked for here would be ignored
  // (a scenario file's schedule is for the other commands that read it).
  for (const char *field : {"pipeline.schedule", "pipeline.schedule_file"}) {
    const auto given = input.origins.find(field);
    if (given != input.origins.end() && given->second.file.empty())
      input.fail(field, "frontier searches v-auto's building blocks; it takes no schedule");
  }
  input.schedule = "v-auto";
  const ScheduleInfo &info = find_schedule(input.schedule);
  const Scenario scenario = build_scenario(input, info);
  const int p = scenario.devices;
  const std::int64_t cap_chunks = schedules::v_auto_cap_chunks(scenario);
  Progress progress(err, progress_mode(values, err), "frontier", "starting patterns",
                    kFrontierLines);
  const schedules::VAutoResult result = schedules::v_auto_search(
      scenario, cap_chunks,
      static_cast<unsigned>(checked_integer(values, "threads", 0, kMaxThreads)),
      progress.callback());
  progress.clear();
  const std::string written =
      fmt::format("{} frontier points to standard output", result.frontier.size());

  if (format == "json") {
    out << fmt::format(
        "{{\"devices\": {}, \"microbatches\": {}, \"cap_chunks\": {}, \"frontier\": [", p,
        scenario.microbatches, cap_chunks);
    for (std::size_t k = 0; k < result.frontier.size(); ++k) {
      const schedules::FrontierPoint &point = result.frontier[k];
      out << fmt::format(
          "{}{{\"peak_chunks\": {}, \"peak_K\": {}, \"bubble_slots\": {}, \"max_span\": {}}}",
          k == 0 ? "" : ", ", point.peak_chunks, point.peak_chunks / 2.0, point.bubble_slots,
          scenario.time_scale.format(point.best_span));
    }
    out << "]}\n";
    progress.finish(written);
    return kOk;
  }
  out << fmt::format("v-auto frontier, p = {}, m = {}, cap {} chunk activations\n", p,
                     scenario.microbatches, cap_chunks);
  out << fmt::format("{:>12}  {:>6}  {:>12}  {:>13}\n", "peak chunks", "peak K", "bubble slots",
                     "best max span");
  for (const schedules::FrontierPoint &point : result.frontier) {
    out << fmt::format("{:>12}  {:>6}  {:>12}  {:>13}\n", point.peak_chunks,
                       point.peak_chunks / 2.0, point.bubble_slots,
                       scenario.time_scale.readable(point.best_span));
  }
  progress.finish(written);
  return kOk;
}

} // namespace ppsim::cli
