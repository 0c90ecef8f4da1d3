// ppsim: the subcommand table and dispatch (CONVENTIONS example 12).
#include "cli/commands.h"
#include "ppsim_version.h"

#include <fmt/format.h>
#include <iostream>
#include <string_view>

namespace {

struct Command {
  std::string_view name;
  std::string_view description;
  int (*run)(const ppsim::cli::Args &, std::ostream &, std::ostream &);
};

constexpr Command kCommands[] = {
    {"simulate",
     "time one schedule on a scenario: makespan, bubbles, memory, SVG, trace, --explain",
     ppsim::cli::run_simulate},
    {"compare",
     "rank every schedule and recomputation plan under the memory budget; name the winner",
     ppsim::cli::run_compare},
    {"report", "the ranking of compare as one interactive HTML page (Gantt, memory, bubbles)",
     ppsim::cli::run_report},
    {"bounds", "lower bounds on the makespan under a memory cap K, and the closed form",
     ppsim::cli::run_bounds},
    {"optimal", "exact optimum makespan of a tiny instance", ppsim::cli::run_optimal},
    {"synthesize",
     "search a schedule under the memory cap that beats the published ones; certified gap",
     ppsim::cli::run_synthesize},
    {"remat", "optimal recomputation plan (ILP) beside the baselines; --auto ranks schedules",
     ppsim::cli::run_remat},
    {"frontier", "bubble versus memory frontier of the V-shape building-block search",
     ppsim::cli::run_frontier},
    {"partition", "split a per-layer cost file into balanced stages under a memory budget",
     ppsim::cli::run_partition},
    {"lynx", "on-demand versus overlapped (Lynx) recomputation, per stage and overall",
     ppsim::cli::run_lynx},
    {"checkpoint",
     "which layers of a stage to store, checkpoint or recompute (rotor DP) from a cost file",
     ppsim::cli::run_checkpoint},
    {"sweep", "run a sweep file on all cores into one CSV (sharding, resume)",
     ppsim::cli::run_sweep},
    {"merge", "join the CSV shards of a sweep", ppsim::cli::run_merge},
    {"plot", "draw a paper figure from sweep results or a trace (matplotlib)",
     ppsim::cli::run_plot},
    {"schedules", "list the schedule generators", ppsim::cli::run_schedules},
    {"export", "write a schedule as PyTorch pipelining CSV", ppsim::cli::run_export},
    {"profile", "measure per-layer costs on a GPU (CUPTI), or write the analytic cost model",
     ppsim::cli::run_profile},
};

void print_usage(std::ostream &out) {
  out << "usage: ppsim <command> [options]   (ppsim <command> --help for its options; ppsim "
         "--version)\n\ncommands:\n";
  for (const Command &command : kCommands) {
    out << fmt::format("  {:<10} {}\n", command.name, command.description);
  }
}

// A full disk or a closed pipe must not pass for success: the output is the result.
int checked_exit(int code) {
  std::cout.flush();
  if (!std::cout && code == ppsim::cli::kOk) {
    std::cerr << "ppsim: error: cannot write to standard output\n";
    return ppsim::cli::kUserError;
  }
  return code;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 2 && std::string_view(argv[1]) == "--version") {
    std::cout << fmt::format("ppsim {} (commit {})\n", PPSIM_VERSION, PPSIM_COMMIT);
    return checked_exit(ppsim::cli::kOk);
  }
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
    print_usage(argc < 2 ? std::cerr : std::cout);
    return checked_exit(argc < 2 ? ppsim::cli::kUserError : ppsim::cli::kOk);
  }
  const ppsim::cli::Args args(argv + 2, argv + argc);
  for (const Command &command : kCommands) {
    if (command.name != argv[1])
      continue;
    return checked_exit(ppsim::cli::guarded(command.run, args, std::cout, std::cerr,
                                            fmt::format("'ppsim {}'", command.name)));
  }
  std::cerr << fmt::format("ppsim: error: unknown command '{}' (see 'ppsim --help')\n", argv[1]);
  return ppsim::cli::kUserError;
}
