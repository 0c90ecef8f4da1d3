#pragma once
// Running another program from a command (`ppsim plot` runs matplotlib, `ppsim sweep --slurm`
// runs sbatch): spawned without a shell, waited for.
#include <string>
#include <vector>

namespace ppsim::cli {

/// Runs `arguments` (argv[0] is the program, looked up on PATH when it has no slash) and waits
/// for it. Returns its exit status, or -1 when it did not run or did not exit. Its standard
/// output and error go to the files `output` and `errors` when given (created or truncated),
/// else to ours.
int run_program(const std::vector<std::string> &arguments, const std::string &output = "",
                const std::string &errors = "");

} // namespace ppsim::cli
