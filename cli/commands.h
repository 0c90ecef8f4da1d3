#pragma once
// Subcommand handlers. Each parses its own options (Boost.Program_options), calls libraries and
// prints; handlers take streams so tests run them in-process. See cli/main.cpp for the table.
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim::cli {

/// Process exit codes (docs/model.md, "Validation and exit codes").
enum ExitCode : int { kOk = 0, kUserError = 1, kInternalError = 2 };

/// Arguments after the subcommand name.
using Args = std::vector<std::string>;

int run_simulate(const Args &args, std::ostream &out, std::ostream &err);
int run_compare(const Args &args, std::ostream &out, std::ostream &err);
int run_report(const Args &args, std::ostream &out, std::ostream &err);
int run_bounds(const Args &args, std::ostream &out, std::ostream &err);
int run_optimal(const Args &args, std::ostream &out, std::ostream &err);
int run_schedules(const Args &args, std::ostream &out, std::ostream &err);
int run_export(const Args &args, std::ostream &out, std::ostream &err);
int run_profile(const Args &args, std::ostream &out, std::ostream &err);
int run_sweep(const Args &args, std::ostream &out, std::ostream &err);
int run_merge(const Args &args, std::ostream &out, std::ostream &err);
int run_plot(const Args &args, std::ostream &out, std::ostream &err);
int run_remat(const Args &args, std::ostream &out, std::ostream &err);
int run_frontier(const Args &args, std::ostream &out, std::ostream &err);
int run_partition(const Args &args, std::ostream &out, std::ostream &err);
int run_lynx(const Args &args, std::ostream &out, std::ostream &err);
int run_checkpoint(const Args &args, std::ostream &out, std::ostream &err);
int run_synthesize(const Args &args, std::ostream &out, std::ostream &err);

/// Runs `handler`, turning ppsim::Error into "ppsim: error: <message>" + exit 1 and internal
/// failures into exit 2, so every subcommand reports errors the same way. Running out of memory
/// or threads is the system's limit, not a bug: one line naming `command`, exit 1
/// (docs/reliability.md, "Limits").
int guarded(int (*handler)(const Args &, std::ostream &, std::ostream &), const Args &args,
            std::ostream &out, std::ostream &err, std::string_view command = "the command");

} // namespace ppsim::cli
