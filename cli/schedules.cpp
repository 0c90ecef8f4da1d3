// `ppsim schedules`: the registry with one-line descriptions.
#include "cli/commands.h"
#include "cli/scenario_options.h"

#include "sim/io/report.h"
#include "sim/schedules/registry.h"

#include <fmt/format.h>
#include <ostream>

namespace ppsim::cli {
namespace po = boost::program_options;

int run_schedules(const Args &args, std::ostream &out, std::ostream & /*err*/) {
  po::options_description options("ppsim schedules [--format text|json]");
  options.add_options()("help,h", "show this help")(
      "format", po::value<std::string>()->default_value("text"), "text or json");
  const po::variables_map values = parse_command(args, options, {});
  if (values.count("help")) {
    out << options << "\nLists the schedule generators (--schedule NAME).\n";
    return kOk;
  }
  if (checked_choice(values, "format", {"text", "json"}) == "json") {
    std::vector<std::string> entries;
    for (const ScheduleInfo &info : schedule_registry()) {
      entries.push_back(fmt::format("{{\"name\": {}, \"description\": {}}}",
                                    json_string(info.name), json_string(info.description)));
    }
    out << fmt::format("{{\"schedules\": [{}]}}\n", fmt::join(entries, ", "));
    return kOk;
  }
  std::size_t width = 4;
  for (const ScheduleInfo &info : schedule_registry())
    width = std::max(width, info.name.size());
  for (const ScheduleInfo &info : schedule_registry()) {
    out << fmt::format("{:<{}}  {}\n", info.name, width, info.description);
  }
  out << fmt::format("{:<{}}  {}\n", "file", width,
                     "import a PyTorch CSV schedule (--schedule-file)");
  return kOk;
}

} // namespace ppsim::cli
