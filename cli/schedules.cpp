// `ppsim schedules`: the registry with one-line descriptions.
#include "cli/commands.h"

#include "base/error.h"
#include "sim/schedules/registry.h"

#include <fmt/format.h>
#include <ostream>

namespace ppsim::cli {

int run_schedules(const Args &args, std::ostream &out, std::ostream & /*err*/) {
  if (!args.empty() && (args.front() == "--help" || args.front() == "-h")) {
    out << "ppsim schedules: list the schedule generators\n";
    return kOk;
  }
  if (!args.empty())
    throw Error(fmt::format("unexpected argument '{}'", args.front()));
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
