#include "run/sweep_slurm.h"

#include "base/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace ppsim {

std::string shell_quoted(std::string_view text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

std::string slurm_shard_path(const std::string &directory, int task) {
  return fmt::format("{}/shard-{}.csv", directory, task);
}

SlurmScripts slurm_scripts(const SlurmSweep &job) {
  std::string options;
  for (const std::string &option : job.sbatch_options) {
    // One #SBATCH line holds one option: sbatch splits the line at spaces.
    if (!option.starts_with("-") || option.find_first_of(" \t\r\n#") != std::string::npos)
      throw Error("", 0, "--sbatch",
                  fmt::format("expected one sbatch option without spaces, such as "
                              "--partition=NAME, got \"{}\"",
                              option));
    const std::string name = option.substr(0, option.find('='));
    for (const char *own : {"--array", "--cpus-per-task", "-c", "--output", "-o", "--error",
                            "-e", "--requeue", "--no-requeue", "--open-mode", "--dependency",
                            "-d", "--ntasks", "-n"})
      if (name == own)
        throw Error("", 0, "--sbatch",
                    fmt::format("{} is set by ppsim's scripts (the array from --slurm, the CPUs "
                                "from -j)",
                                name));
    options += fmt::format("#SBATCH {}\n", option);
  }
  // `#SBATCH --output` takes the path in double quotes, where sbatch reads a backslash as an
  // escape and % as a pattern (so a % of the path is written %%); the rest goes through
  // shell_quoted.
  if (job.directory.find_first_of("\"\\\r\n") != std::string::npos)
    throw Error("", 0, "-o",
                fmt::format("a Slurm log path cannot hold a double quote, a backslash or a line "
                            "break: {}",
                            job.directory));
  std::string log_directory;
  for (const char c : job.directory)
    log_directory += c == '%' ? std::string("%%") : std::string(1, c);
  const std::string directory = shell_quoted(job.directory);
  SlurmScripts scripts;
  // The shard and log names hold the task id, so a requeued task finds its own journal and
  // appends to its own log; --resume keeps the rows it journaled (docs/sweep.md, "Interruptions").
  scripts.array = fmt::format(
      "#!/bin/sh\n"
      "# ppsim sweep as a Slurm job array (docs/sweep.md, \"Slurm\"): task i runs shard\n"
      "# i/{tasks}; a requeued task resumes from its journal.\n"
      "#SBATCH --job-name=ppsim-sweep\n"
      "#SBATCH --array=0-{last}\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --cpus-per-task={threads}\n"
      "#SBATCH --requeue\n"
      "#SBATCH --open-mode=append\n"
      "#SBATCH --output=\"{log}\"\n"
      "{options}"
      "exec {ppsim} sweep {sweep} --shard \"$SLURM_ARRAY_TASK_ID/{tasks}\" -j {threads} "
      "--resume -o {directory}/shard-\"$SLURM_ARRAY_TASK_ID\".csv\n",
      fmt::arg("tasks", job.tasks), fmt::arg("last", job.tasks - 1),
      fmt::arg("threads", job.threads),
      fmt::arg("log", log_directory + "/task-%a.log"), fmt::arg("options", options),
      fmt::arg("ppsim", shell_quoted(job.ppsim)), fmt::arg("sweep", shell_quoted(job.sweep_file)),
      fmt::arg("directory", directory));
  // The shards by name, not by a pattern: an earlier submission's with more tasks may remain.
  std::string shards;
  for (int task = 0; task < job.tasks; ++task)
    shards += fmt::format(" \\\n  {}", shell_quoted(slurm_shard_path(job.directory, task)));
  scripts.merge = fmt::format(
      "#!/bin/sh\n"
      "# Merges the shards of the ppsim sweep job array once every task has ended well.\n"
      "#SBATCH --job-name=ppsim-sweep-merge\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --output=\"{log}\"\n"
      "{options}"
      "exec {ppsim} merge{shards} \\\n  -o {output}\n",
      fmt::arg("log", log_directory + "/merge.log"), fmt::arg("options", options),
      fmt::arg("ppsim", shell_quoted(job.ppsim)), fmt::arg("shards", shards),
      fmt::arg("output", shell_quoted(job.output)));
  return scripts;
}

std::string parse_sbatch_job_id(std::string_view printed) {
  std::string_view line = printed.substr(0, printed.find_first_of(";\r\n"));
  if (line.empty() || !std::all_of(line.begin(), line.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
      }))
    throw Error(fmt::format("sbatch printed no job id (\"{}\")",
                            printed.substr(0, printed.find_first_of("\r\n"))));
  return std::string(line);
}

} // namespace ppsim
