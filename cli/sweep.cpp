// `ppsim sweep`: runs every point of a sweep file (docs/sweep.md, "Sweep files") on all cores and
// writes one CSV row per point, in run order whatever the thread count. With -o the rows are
// journaled to OUT.partial as they finish, so `--resume` after a kill redoes only unfinished
// points; the results file itself is only ever written whole.
#include "base/parallel.h"
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/progress.h"
#include "cli/program.h"
#include "cli/scenario_options.h"

#include "base/error.h"
#include "base/text_file.h"
#include "run/sweep.h"
#include "run/sweep_slurm.h"
#include "solver/milp.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

namespace ppsim::cli {
namespace po = boost::program_options;
namespace {

// Rows already finished (results file and journal), by run id; only with --resume.
std::map<std::string, std::string> finished_rows(const std::string &output,
                                                 const std::string &header) {
  std::map<std::string, std::string> rows;
  for (const std::string &path : {output, output + ".partial"}) {
    if (!std::filesystem::exists(path))
      continue;
    const Results results = parse_results(read_text_file(path, "results file"), path);
    if (results.header != header) {
      throw Error(path, 1, "",
                  "the columns differ from this sweep's; remove the file or run without --resume");
    }
    for (const ResultsRow &row : results.rows)
      rows.emplace(row.id, row.line);
  }
  return rows;
}

/// Array tasks at most: Slurm's default MaxArraySize is 1001.
constexpr std::int64_t kMostSlurmTasks = 1000;

// The first line of a file a program wrote (its message), or "" when there is none.
std::string first_line(const std::string &path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

// `ppsim sweep --slurm N` (docs/sweep.md, "Slurm"): writes the job array's and the merge's
// scripts into OUTPUT.slurm/ and, unless --no-submit, submits both with sbatch.
int submit_slurm_sweep(const po::variables_map &values, const std::string &output,
                       std::ostream &out) {
  namespace fs = std::filesystem;
  SlurmSweep job;
  job.tasks = static_cast<int>(checked_integer(values, "slurm", 1, kMostSlurmTasks));
  job.threads =
      values.count("jobs") ? static_cast<int>(checked_integer(values, "jobs", 1, kMaxThreads)) : 1;
  job.ppsim = fs::read_symlink("/proc/self/exe").string();
  job.sweep_file = fs::absolute(values["sweep"].as<std::string>()).lexically_normal().string();
  job.output = fs::absolute(output).lexically_normal().string();
  job.directory = job.output + ".slurm";
  if (values.count("sbatch"))
    job.sbatch_options = values["sbatch"].as<std::vector<std::string>>();
  const SlurmScripts scripts = slurm_scripts(job);
  std::error_code failed;
  fs::create_directories(job.directory, failed);
  if (failed)
    throw Error(job.directory, 0, "",
                fmt::format("cannot create the folder for the job's scripts, shards and logs "
                            "({})",
                            failed.message()));
  const std::string array = job.directory + "/array.sh", merge = job.directory + "/merge.sh";
  write_file_atomically(array, scripts.array);
  write_file_atomically(merge, scripts.merge);
  if (values.count("no-submit")) {
    out << fmt::format("wrote {} and {}; submit them with\n"
                       "  job=$(sbatch --parsable {})\n"
                       "  sbatch --dependency=afterok:$job --kill-on-invalid-dep=yes {}\n",
                       array, merge, shell_quoted(array), shell_quoted(merge));
    return kOk;
  }
  // sbatch's messages go to files beside the scripts, read back for the error line.
  const std::string printed = job.directory + "/sbatch.out", errors = job.directory + "/sbatch.err";
  const auto submit = [&](std::vector<std::string> arguments, const std::string &what) {
    const int status = run_program(arguments, printed, errors);
    if (status == -1)
      throw Error("", 0, "--slurm",
                  "sbatch did not run (is it on PATH?); give --no-submit to write the scripts "
                  "only and submit them where Slurm's commands are");
    if (status != 0)
      throw Error("", 0, "--slurm",
                  fmt::format("sbatch refused {}: {}", what, first_line(errors)));
    return parse_sbatch_job_id(read_text_file(printed, "sbatch's output"));
  };
  const std::string array_id = submit({"sbatch", "--parsable", array}, "the job array");
  std::string merge_id;
  try {
    merge_id = submit({"sbatch", "--parsable", "--dependency=afterok:" + array_id,
                       "--kill-on-invalid-dep=yes", merge},
                      "the merge job");
  } catch (const Error &error) {
    throw Error("", 0, "--slurm",
                fmt::format("job array {} is submitted, but {}; submit {} after it", array_id,
                            error.sentence(), merge));
  }
  fs::remove(printed);
  fs::remove(errors);
  out << fmt::format("submitted job array {} ({} tasks, shard i/{} each) and merge job {} after "
                     "it\nthe merged results will be written to {}\n"
                     "shards, journals and logs: {}\n",
                     array_id, job.tasks, job.tasks, merge_id, job.output, job.directory);
  return kOk;
}

} // namespace

int run_sweep(const Args &args, std::ostream &out, std::ostream &err) {
  po::options_description options("ppsim sweep SWEEP.toml [options]");
  options.add_options()("help,h", "show this help")("output,o",
                                                    po::value<std::string>()->value_name("FILE"),
                                                    "results CSV (default: standard output)")(
      "jobs,j", po::value<std::int64_t>()->value_name("N"),
      "worker threads (default: every core; with --slurm, 1 per task)")(
      "shard", po::value<std::string>()->value_name("i/N"),
      "run only the points k with k mod N == i")(
      "resume", "skip points whose run id is already in the output (or its .partial journal)")(
      "slurm", po::value<std::int64_t>()->value_name("N"),
      "submit as a Slurm job array of N tasks (shards) and a merge job into -o")(
      "sbatch", po::value<std::vector<std::string>>()->value_name("OPTION")->composing(),
      "with --slurm: an sbatch option for both jobs (--partition=NAME), repeatable")(
      "no-submit", "with --slurm: write the two batch scripts only")(
      "sweep", po::value<std::string>()->value_name("SWEEP.toml"), "sweep file");
  add_quiet_option(options);
  const auto parsed = parse_file_command(args, options, "sweep", out);
  if (!parsed)
    return kOk;
  const po::variables_map &values = *parsed;
  if (!values.count("sweep"))
    throw Error("", 0, "", "missing the sweep file (ppsim sweep SWEEP.toml)");
  // Standard output, a pipe or a descriptor (`-o -`, `-o /dev/stdout`) is written in place at the
  // end, with no journal or lock beside it.
  const std::string given = values.count("output") ? values["output"].as<std::string>() : "";
  const bool stream = !given.empty() && is_stream_output(given);
  const std::string output = stream ? "" : given;
  if (values.count("resume") && output.empty())
    throw Error("", 0, "--resume", "needs an output file (-o)");
  const unsigned jobs = values.count("jobs")
                            ? static_cast<unsigned>(checked_integer(values, "jobs", 1, kMaxThreads))
                            : std::max(1u, std::thread::hardware_concurrency());
  const Shard shard =
      values.count("shard") ? parse_shard(values["shard"].as<std::string>(), "--shard") : Shard{};
  for (const char *option : {"sbatch", "no-submit"})
    if (values.count(option) && !values.count("slurm"))
      throw Error("", 0, fmt::format("--{}", option), "goes with --slurm N");
  if (values.count("slurm")) {
    if (output.empty())
      throw Error("", 0, "--slurm", "needs an output file (-o) for the merged results");
    for (const char *option : {"shard", "resume"})
      if (values.count(option))
        throw Error("", 0, fmt::format("--{}", option),
                    "--slurm gives each array task its own shard, resumed when requeued");
  }

  const Sweep sweep = read_sweep_file(values["sweep"].as<std::string>());
  std::vector<std::string> inputs{values["sweep"].as<std::string>(), sweep.base_file,
                                  sweep.base.schedule_file};
  inputs.insert(inputs.end(), sweep.base.costs_files.begin(), sweep.base.costs_files.end());
  check_outputs(given_outputs(values, {"output"}), inputs);
  if (values.count("slurm"))
    return submit_slurm_sweep(values, output, out);
  const std::string header = fmt::format("{}", fmt::join(sweep_columns(sweep), ","));
  std::vector<std::size_t> indices;
  for (std::size_t k = 0; k < sweep.size(); ++k) {
    if (shard.contains(k))
      indices.push_back(k);
  }
  std::optional<OutputLock> lock;
  if (!output.empty())
    lock.emplace(output);
  const std::map<std::string, std::string> finished =
      values.count("resume") ? finished_rows(output, header) : std::map<std::string, std::string>{};

  // rows[i] is the row of indices[i]; a point left empty still has to run.
  std::vector<std::string> rows(indices.size());
  std::vector<std::size_t> pending;
  std::string kept = header + "\n"; // the journal's first content: the rows already finished
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const auto done = finished.find(sweep.point(indices[i]).id);
    if (done == finished.end()) {
      pending.push_back(i);
    } else {
      rows[i] = done->second;
      kept += rows[i] + "\n";
    }
  }
  // Rewritten through a temporary file and a rename, so a kill now leaves the old journal or the
  // new one, never a truncated one; new rows are then appended.
  std::optional<std::ofstream> journal;
  if (!output.empty()) {
    write_file_atomically(output + ".partial", kept);
    journal.emplace(output + ".partial", std::ios::binary | std::ios::app);
    if (!*journal)
      throw Error(output + ".partial", 0, "", "cannot write the sweep journal");
  }

  std::atomic<std::size_t> next{0};
  std::mutex finished_mutex; // guards the journal and `failure`
  std::exception_ptr failure;
  Progress progress(err, progress_mode(values, err), "sweep", "points");
  ProgressCounter counter(progress.callback(), pending.size());
  const auto worker = [&] {
    for (std::size_t n = next++; n < pending.size(); n = next++) {
      const std::size_t i = pending[n];
      std::string row;
      try {
        row = run_sweep_point(sweep, sweep.point(indices[i]));
      } catch (...) { // an internal failure: stop every worker and report it (exit 2)
        const std::lock_guard lock(finished_mutex);
        if (!failure)
          failure = std::current_exception();
        next = pending.size();
        return;
      }
      const std::lock_guard lock(finished_mutex);
      rows[i] = std::move(row);
      if (journal)
        *journal << rows[i] << '\n' << std::flush;
      counter.step_done(fmt::format("run {}", indices[i]));
    }
  };
  // A point's ILP forks CBC's process, which under ASan can deadlock while another thread
  // allocates (solver::concurrent_solves): sanitizer builds run one point at a time.
  run_on_threads(solver::concurrent_solves(static_cast<unsigned>(
                     std::min<std::size_t>(jobs, std::max<std::size_t>(1, pending.size())))),
                 worker);
  if (failure)
    std::rethrow_exception(failure);

  std::string content = header + "\n";
  for (const std::string &row : rows)
    content += row + "\n";
  progress.clear();
  if (stream) {
    write_file_atomically(given, content);
  } else if (output.empty()) {
    out << content;
  } else {
    write_file_atomically(output, content);
    journal.reset();
    std::filesystem::remove(output + ".partial");
  }
  const std::size_t resumed = rows.size() - pending.size();
  progress.finish(
      fmt::format("{} row{} to {}{}", rows.size(), rows.size() == 1 ? "" : "s",
                  given.empty() || given == "-" ? "standard output" : given,
                  resumed == 0 ? "" : fmt::format(" ({} from the earlier run)", resumed)));
  return kOk;
}

} // namespace ppsim::cli
