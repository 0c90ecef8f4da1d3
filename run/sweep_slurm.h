#pragma once
// A sweep as a Slurm job array (docs/sweep.md, "Slurm"): task i of N runs shard i/N with
// --resume, so a requeued task continues from its journal, and a merge job that depends on
// every task puts the shards back together. The scripts are text; `ppsim sweep --slurm` writes
// and submits them.
#include <string>
#include <string_view>
#include <vector>

namespace ppsim {

struct SlurmSweep {
  std::string ppsim;      ///< absolute path of the ppsim binary the tasks run (this one)
  std::string sweep_file; ///< absolute path of the sweep file
  std::string output;     ///< absolute path of the merged results
  std::string directory;  ///< absolute: the scripts, each task's shard, journal and log
  int tasks = 1;          ///< array tasks, one shard each
  int threads = 1;        ///< worker threads per task (-j, and --cpus-per-task)
  /// Options for both jobs (`--partition=gpu`, `--time=2:00:00`), written as `#SBATCH` lines.
  std::vector<std::string> sbatch_options;
};

struct SlurmScripts {
  std::string array; ///< the job array: `sbatch --parsable array.sh`
  std::string merge; ///< the merge: `sbatch --dependency=afterok:JOB merge.sh`
};

/// The two batch scripts of `job`. Throws Error naming `--sbatch` for an option that is not
/// one `#SBATCH` line (it must start with '-' and hold no line break).
SlurmScripts slurm_scripts(const SlurmSweep &job);

/// The path of task `task`'s shard in `directory` (what the merge reads).
std::string slurm_shard_path(const std::string &directory, int task);

/// The job id in what `sbatch --parsable` printed ("123" or "123;cluster", then a line break).
/// Throws Error when there is none.
std::string parse_sbatch_job_id(std::string_view printed);

/// `text` quoted for a POSIX shell (single quotes; a quote inside as '\'').
std::string shell_quoted(std::string_view text);

} // namespace ppsim
