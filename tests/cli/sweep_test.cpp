// `ppsim sweep` and `ppsim merge` end to end: CSV schema, determinism across thread counts,
// resume after a killed run, shards merged back into the unsharded file (also via GNU parallel).
#include "base/index.h"
#include "tests/cli/cli_support.h"

#include "run/sweep.h"
#include "run/sweep_slurm.h"

#include <chrono>
#include <doctest/doctest.h>
#include <filesystem>
#include <thread>
#include <tuple>
#include <utility>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace ppsim {
namespace {

using testing::Scratch;

// 4 schedules x 2 microbatch counts x 2 caps, on the quickstart scenario.
constexpr const char *kSmallSweep = R"(base = "base.toml"
[axes]
"pipeline.schedule" = ["1f1b", "zb-h1", "dualpipev", "zb-v"]
"pipeline.microbatches" = [2, 8]
"cluster.K" = [2, 8]
)";

void write_base(const Scratch &scratch) {
  scratch.write(
      "base.toml",
      "[model]\nF = 1\nB = 1\nW = 1\n[cluster]\ndevices = 4\n[cluster.link]\nlatency = 0.05\n");
}

std::size_t line_count(const std::string &text) {
  return ppsim::at(std::count(text.begin(), text.end(), '\n'));
}

TEST_CASE("sweep writes one row per point with parameters, metrics, bound and failures") {
  const Scratch scratch("sweep-schema");
  write_base(scratch);
  scratch.write("s.toml", kSmallSweep);
  const auto result = scratch.ppsim("sweep s.toml -o out.csv -j 2");
  REQUIRE(result.exit_code == 0);
  // Standard error is a file: no bar, a line per point, then what was written where.
  CHECK(line_count(result.err) == 17);
  CHECK(result.err.starts_with("ppsim: sweep: 1/16 points (run "));
  CHECK(result.err.ends_with("ppsim: wrote 16 rows to out.csv\n"));
  CHECK_FALSE(scratch.exists("out.csv.partial"));
  const Results results = parse_results(scratch.read("out.csv"), "out.csv");
  CHECK(results.header == "run,run_id,points,pipeline.schedule,pipeline.microbatches,cluster.K,"
                          "schedule,p,m,v,remat_policy,feasible,makespan,"
                          "max_span,ideal,bubble_ratio,span_bubble_ratio,peak_activations,peak_"
                          "bytes,best_lower_bound,gap,"
                          "recompute_time,device_bubble,error");
  REQUIRE(results.rows.size() == 16);
  for (std::size_t k = 0; k < results.rows.size(); ++k)
    CHECK(results.rows[k].run == k);
  // 1F1B p=4 m=8 F=B=W=1 c=0.05: fits K=8, and its bound (LB1 with latency) is 33.3; every
  // device is busy 24 of the 33.8, so the per-device bubble is 9.8.
  CHECK(results.rows[3].line ==
        fmt::format("3,{},16,1f1b,8,8,1f1b,4,8,1,none,true,33.8,33.8,24,0.28994082840236685,"
                    "0.28994082840236685,4,,33.3,0.01501501501501501,0,9.8,",
                    results.rows[3].id));
  // Over the cap: measured, but infeasible with the reason and no bound.
  CHECK(split_csv_line(results.rows[2].line)[11] == "false");
  CHECK(split_csv_line(results.rows[2].line).back() == "device 0 exceeds the memory cap: 3 > 2");
  CHECK(split_csv_line(results.rows[2].line)[19].empty());
  // Invalid point: no metrics, the generator's reason, and the sweep continued.
  CHECK(results.rows[8].line == fmt::format("8,{},16,dualpipev,2,2,dualpipev,4,2,,none,false,,,,,,,"
                                            ",,,,,\"schedule 'dualpipev' needs m >= 2p = 8 "
                                            "microbatches (the number of stages), got m = 2\"",
                                            results.rows[8].id));
}

TEST_CASE("sweep output is the same whatever the thread count") {
  const Scratch scratch("sweep-threads");
  write_base(scratch);
  scratch.write("s.toml", kSmallSweep);
  REQUIRE(scratch.ppsim("sweep s.toml -o one.csv -j 1").exit_code == 0);
  REQUIRE(scratch.ppsim("sweep s.toml -o two.csv -j 2").exit_code == 0);
  REQUIRE(scratch.ppsim("sweep s.toml -j 3").exit_code == 0);
  CHECK(scratch.read("one.csv") == scratch.read("two.csv"));
  CHECK(scratch.read("stdout.txt") == scratch.read("one.csv"));
}

// Enough points to take a few seconds, so the run can be killed in the middle.
constexpr const char *kLargeSweep = R"(base = "base.toml"
[axes]
"pipeline.schedule" = ["1f1b", "zb-h1", "zb-v", "interleaved"]
"cluster.devices" = [4, 8, 16]
"pipeline.microbatches" = [16, 32, 48, 64, 80, 96, 112, 128]
"model.W" = [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5]
)";

TEST_CASE("a killed sweep resumes without lost or duplicated rows") {
  const Scratch scratch("sweep-resume");
  write_base(scratch);
  scratch.write("s.toml", kLargeSweep);
  REQUIRE(scratch.ppsim("sweep s.toml -o clean.csv -j 2").exit_code == 0);
  const std::string clean = scratch.read("clean.csv");
  REQUIRE(line_count(clean) == 961);

  // Start in the background, kill -9 once some rows are journaled.
  REQUIRE(std::system(
              fmt::format(
                  "cd '{}' && ('{}' sweep s.toml -o out.csv -j 2 >/dev/null 2>&1 & echo $! > pid)",
                  scratch.file(""), PPSIM_BINARY)
                  .c_str()) == 0);
  std::size_t journaled = 0;
  for (int wait = 0; wait < 600 && journaled < 50; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    journaled = line_count(scratch.read("out.csv.partial"));
  }
  REQUIRE(std::system(fmt::format("kill -9 $(cat '{}')", scratch.file("pid")).c_str()) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(journaled >= 50);
  CHECK_FALSE(scratch.exists("out.csv")); // never half-written
  const std::size_t done_before = line_count(scratch.read("out.csv.partial"));
  CHECK(done_before < 961);

  REQUIRE(scratch.ppsim("sweep s.toml -o out.csv -j 2 --resume").exit_code == 0);
  CHECK(scratch.read("out.csv") == clean);
  CHECK_FALSE(scratch.exists("out.csv.partial"));
  // Resuming a finished sweep recomputes nothing and rewrites the same file.
  REQUIRE(scratch.ppsim("sweep s.toml -o out.csv --resume").exit_code == 0);
  CHECK(scratch.read("out.csv") == clean);
}

TEST_CASE("a second sweep on the same output is refused while the first holds it") {
  const Scratch scratch("sweep-lock");
  write_base(scratch);
  scratch.write("s.toml", kSmallSweep);
  // Hold the lock as a running sweep would.
  const int fd = ::open(scratch.file("out.csv.lock").c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  const auto refused = scratch.ppsim("sweep s.toml -o out.csv");
  CHECK(refused.exit_code == 1);
  CHECK(refused.err ==
        "ppsim: error: out.csv: another sweep is writing this output (it holds out.csv.lock); wait "
        "for it or use another -o\n");
  CHECK_FALSE(scratch.exists("out.csv.partial")); // nothing touched
  ::close(fd);                                    // the first one ends (or is killed)
  CHECK(scratch.ppsim("sweep s.toml -o out.csv").exit_code == 0);
  CHECK_FALSE(scratch.exists("out.csv.lock"));
}

TEST_CASE("resume skips the run ids already in the output") {
  const Scratch scratch("sweep-resume-ids");
  write_base(scratch);
  scratch.write("s.toml", kSmallSweep);
  REQUIRE(scratch.ppsim("sweep s.toml -o out.csv").exit_code == 0);
  const std::string clean = scratch.read("out.csv");
  // A row kept from "before" is taken as is, not recomputed: mark it to see it survive.
  const std::size_t row_start = clean.find("\n3,") + 1;
  std::string marked = clean;
  marked.replace(clean.find(",none,", row_start), 6, ",kept,");
  scratch.write("out.csv", marked);
  const auto resumed = scratch.ppsim("sweep s.toml -o out.csv --resume");
  REQUIRE(resumed.exit_code == 0);
  CHECK(scratch.read("out.csv") == marked);
  CHECK(resumed.err == "ppsim: wrote 16 rows to out.csv (16 from the earlier run)\n");
}

TEST_CASE("issue_18 sweep progress: a line per point, -q for none, a bar on a terminal") {
  const Scratch scratch("sweep-progress");
  write_base(scratch);
  scratch.write("s.toml", R"(base = "base.toml"
[axes]
"pipeline.schedule" = ["1f1b", "zb-h1"]
"pipeline.microbatches" = [2, 8]
)");
  // One worker: the points complete in run order.
  const auto lines = scratch.ppsim("sweep s.toml -j 1");
  REQUIRE(lines.exit_code == 0);
  CHECK(lines.err == "ppsim: sweep: 1/4 points (run 0)\n"
                     "ppsim: sweep: 2/4 points (run 1)\n"
                     "ppsim: sweep: 3/4 points (run 2)\n"
                     "ppsim: sweep: 4/4 points (run 3)\n"
                     "ppsim: wrote 4 rows to standard output\n");
  const auto quiet = scratch.ppsim("sweep s.toml -j 1 -q -o quiet.csv");
  REQUIRE(quiet.exit_code == 0);
  CHECK(quiet.err.empty());
  CHECK(scratch.read("quiet.csv") == lines.out);
  // On a terminal (script(1) gives the command one): the bar is drawn in place, from 0/4 to 4/4,
  // then erased, and the final line follows; no per-point lines.
  REQUIRE(std::system(fmt::format("cd '{}' && TERM=xterm script -qefc \"'{}' sweep s.toml -o "
                                  "tty.csv\" /dev/null > tty.txt",
                                  scratch.file(""), PPSIM_BINARY)
                          .c_str()) == 0);
  const std::string screen = scratch.read("tty.txt");
  CHECK(screen.starts_with("\rsweep [                        ] 0/4 points\033[K\r"));
  CHECK(screen.find("sweep [########################] 4/4 points  ") != std::string::npos);
  CHECK(screen.ends_with("\033[K\r\033[Kppsim: wrote 4 rows to tty.csv\r\n"));
  CHECK(screen.find("ppsim: sweep:") == std::string::npos);
  CHECK(scratch.read("tty.csv") == lines.out);
}

TEST_CASE("resume redoes the rows whose inputs changed: the base scenario or a file it reads") {
  const Scratch scratch("sweep-resume-inputs");
  write_base(scratch);
  scratch.write("s.toml", kSmallSweep);
  REQUIRE(scratch.ppsim("sweep s.toml -o out.csv").exit_code == 0);
  const std::string first = scratch.read("out.csv");
  // Same inputs: every run id is the same and every row is kept.
  REQUIRE(scratch.ppsim("sweep s.toml -o out.csv --resume").exit_code == 0);
  CHECK(scratch.read("out.csv") == first);
  // A slower forward in the base: new run ids, every row computed again (as a clean run does).
  scratch.write(
      "base.toml",
      "[model]\nF = 2\nB = 1\nW = 1\n[cluster]\ndevices = 4\n[cluster.link]\nlatency = 0.05\n");
  REQUIRE(scratch.ppsim("sweep s.toml -o out.csv --resume").exit_code == 0);
  const std::string resumed = scratch.read("out.csv");
  REQUIRE(scratch.ppsim("sweep s.toml -o clean.csv").exit_code == 0);
  CHECK(resumed == scratch.read("clean.csv"));
  const Results before = parse_results(first, "first"), after = parse_results(resumed, "resumed");
  REQUIRE(before.rows.size() == after.rows.size());
  for (std::size_t k = 0; k < after.rows.size(); ++k)
    CHECK(before.rows[k].id != after.rows[k].id);
  CHECK(split_csv_line(after.rows[3].line)[12] !=
        split_csv_line(before.rows[3].line)[12]); // makespan

  // A cost file the base names: editing its text changes the ids too.
  scratch.write("costs.csv",
                "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n1,0,1,1,1\n1,1,1,1,1\n"
                "1,2,1,1,1\n1,3,1,1,1\n");
  scratch.write("base.toml", "[model]\ncosts_file = \"costs.csv\"\n[cluster]\ndevices = 4\n");
  scratch.write("one.toml", "base = \"base.toml\"\n[axes]\n\"pipeline.microbatches\" = [8]\n");
  REQUIRE(scratch.ppsim("sweep one.toml -o costs_out.csv").exit_code == 0);
  const std::string with_costs = scratch.read("costs_out.csv");
  scratch.write("costs.csv",
                "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n1,0,2,1,1\n1,1,1,1,1\n"
                "1,2,1,1,1\n1,3,1,1,1\n");
  REQUIRE(scratch.ppsim("sweep one.toml -o costs_out.csv --resume").exit_code == 0);
  CHECK(parse_results(scratch.read("costs_out.csv"), "c").rows[0].id !=
        parse_results(with_costs, "c").rows[0].id);
  CHECK(scratch.read("costs_out.csv") != with_costs);
}

TEST_CASE("shards merged give the unsharded file") {
  const Scratch scratch("sweep-shards");
  write_base(scratch);
  scratch.write("s.toml", kSmallSweep);
  REQUIRE(scratch.ppsim("sweep s.toml -o all.csv").exit_code == 0);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(
        scratch.ppsim(fmt::format("sweep s.toml --shard {}/3 -o shard{}.csv", i, i)).exit_code ==
        0);
  }
  const Results shard1 = parse_results(scratch.read("shard1.csv"), "shard1.csv");
  REQUIRE(shard1.rows.size() == 5); // runs 1, 4, 7, 10, 13
  CHECK(shard1.rows[1].run == 4);
  REQUIRE(scratch.ppsim("merge shard2.csv shard0.csv shard1.csv -o merged.csv").exit_code == 0);
  CHECK(scratch.read("merged.csv") == scratch.read("all.csv"));

  const auto twice = scratch.ppsim("merge shard0.csv shard0.csv -o bad.csv");
  CHECK(twice.exit_code == 1);
  CHECK(twice.err == "ppsim: error: shard0.csv:2: run 0 is also in shard0.csv\n");
  CHECK_FALSE(scratch.exists("bad.csv"));
  scratch.write("other.csv", "run,run_id,x\n");
  CHECK(scratch.ppsim("merge shard0.csv other.csv").err ==
        "ppsim: error: other.csv:1: the columns differ from the first file's\n");
  // issue_32: shards with a header and no row were merged into a header, exit 0.
  const std::string shard0 = scratch.read("shard0.csv");
  scratch.write("empty.csv", shard0.substr(0, shard0.find('\n') + 1));
  const auto empty = scratch.ppsim("merge empty.csv empty.csv -o none.csv");
  CHECK(empty.exit_code == 1);
  CHECK(empty.err == "ppsim: error: the inputs hold no rows: nothing tells how many points the "
                     "sweep has; merge the shards that ran points\n");
  CHECK_FALSE(scratch.exists("none.csv"));
  // A shard that ran no point beside those that did is fine.
  CHECK(scratch.ppsim("merge shard2.csv empty.csv shard0.csv shard1.csv -o merged.csv").exit_code ==
        0);
  CHECK(scratch.read("merged.csv") == scratch.read("all.csv"));
}

// Skipped where GNU parallel is not installed (scripts/setup installs it).
TEST_CASE("shards run by GNU parallel merge into the unsharded file" *
          doctest::skip(std::system("command -v parallel >/dev/null 2>&1") != 0)) {
  const Scratch scratch("sweep-parallel");
  write_base(scratch);
  scratch.write("s.toml", kSmallSweep);
  REQUIRE(scratch.ppsim("sweep s.toml -o all.csv").exit_code == 0);
  REQUIRE(
      std::system(
          fmt::format("cd '{}' && parallel --will-cite -j 4 '{}' sweep s.toml --shard {{}}/4 -j 1 "
                      "-o shard{{}}.csv ::: 0 1 2 3",
                      scratch.file(""), PPSIM_BINARY)
              .c_str()) == 0);
  REQUIRE(
      scratch.ppsim("merge shard0.csv shard1.csv shard2.csv shard3.csv -o merged.csv").exit_code ==
      0);
  CHECK(scratch.read("merged.csv") == scratch.read("all.csv"));
}

TEST_CASE("sweep command errors") {
  const Scratch scratch("sweep-errors");
  write_base(scratch);
  scratch.write("s.toml", kSmallSweep);
  CHECK(scratch.ppsim("sweep s.toml --shard 3/3").err ==
        "ppsim: error: field '--shard': expected i/N with 0 <= i < N, got \"3/3\"\n");
  CHECK(scratch.ppsim("sweep s.toml --resume").err ==
        "ppsim: error: field '--resume': needs an output file (-o)\n");
  scratch.write("bad.toml", "base = \"base.toml\"\n[axes]\n\"pipeline.shedule\" = [\"1f1b\"]\n");
  const auto bad = scratch.ppsim("sweep bad.toml -o out.csv");
  CHECK(bad.exit_code == 1);
  CHECK(bad.err == "ppsim: error: bad.toml:3: unknown field 'pipeline.shedule', did you mean "
                   "'pipeline.schedule'?\n");
  CHECK_FALSE(scratch.exists("out.csv"));
  scratch.write("out.csv", "run,run_id,other\n");
  CHECK(scratch.ppsim("sweep s.toml -o out.csv --resume").err ==
        "ppsim: error: out.csv:1: the columns differ from this sweep's; remove the file or run "
        "without --resume\n");
  CHECK(scratch.ppsim("merge").err ==
        "ppsim: error: missing the shard results (ppsim merge SHARD.csv... -o all.csv)\n");
}

TEST_CASE("issue_29 a sweep over the iteration's end reports the iteration and the throughput") {
  const Scratch scratch("sweep-iteration");
  write_base(scratch);
  scratch.write("s.toml", "base = \"base.toml\"\n[axes]\n\"iteration.end\" = [\"none\", \"sync\"]\n"
                          "\"iteration.optimizer\" = [0.5]\n");
  const auto result = scratch.ppsim("sweep s.toml -q");
  REQUIRE(result.exit_code == 0);
  const Results results = parse_results(result.out, "out");
  CHECK(results.header.ends_with(",recompute_time,device_bubble,iteration,throughput,error"));
  REQUIRE(results.rows.size() == 2);
  // No end: the optimizer step would be ignored, so the point is refused; sync: 1F1B's 33.8
  // and the step, 8 microbatches in 34.3 ms.
  CHECK(results.rows[0].line.find("has no effect without the iteration's end") !=
        std::string::npos);
  CHECK(results.rows[1].line.ends_with(",33.8,33.8,24,0.28994082840236685,0.28994082840236685,4,,"
                                       "33.3,0.01501501501501501,0,9.8,34.3,233.23615160349857,"));
  // Without an end anywhere the two columns are left out, as before.
  scratch.write("plain.toml", kSmallSweep);
  CHECK(parse_results(scratch.ppsim("sweep plain.toml -q").out, "out")
            .header.ends_with(",recompute_time,device_bubble,error"));
}

TEST_CASE("issue_34 --slurm --no-submit writes the job array's and the merge's scripts") {
  const Scratch scratch("sweep-slurm-scripts");
  write_base(scratch);
  scratch.write("s.toml", kSmallSweep);
  const auto result = scratch.ppsim(
      "sweep s.toml --slurm 4 -j 2 -o all.csv --sbatch=--partition=debug --sbatch=--time=1:00:00 "
      "--no-submit");
  REQUIRE(result.exit_code == 0);
  const std::string directory = std::filesystem::canonical(scratch.file("all.csv.slurm"));
  const std::string array = directory + "/array.sh", merge = directory + "/merge.sh";
  CHECK(result.out == fmt::format("wrote {} and {}; submit them with\n"
                                  "  job=$(sbatch --parsable '{}')\n"
                                  "  sbatch --dependency=afterok:$job --kill-on-invalid-dep=yes "
                                  "'{}'\n",
                                  array, merge, array, merge));
  const std::string binary = std::filesystem::canonical(PPSIM_BINARY);
  CHECK(scratch.read("all.csv.slurm/array.sh") ==
        fmt::format("#!/bin/sh\n"
                    "# ppsim sweep as a Slurm job array (docs/sweep.md, \"Slurm\"): task i runs "
                    "shard\n"
                    "# i/4; a requeued task resumes from its journal.\n"
                    "#SBATCH --job-name=ppsim-sweep\n"
                    "#SBATCH --array=0-3\n"
                    "#SBATCH --ntasks=1\n"
                    "#SBATCH --cpus-per-task=2\n"
                    "#SBATCH --requeue\n"
                    "#SBATCH --open-mode=append\n"
                    "#SBATCH --output=\"{0}/task-%a.log\"\n"
                    "#SBATCH --partition=debug\n"
                    "#SBATCH --time=1:00:00\n"
                    "exec '{1}' sweep '{2}' --shard \"$SLURM_ARRAY_TASK_ID/4\" -j 2 --resume -o "
                    "'{0}'/shard-\"$SLURM_ARRAY_TASK_ID\".csv\n",
                    directory, binary, std::filesystem::canonical(scratch.file("s.toml"))
                                           .string()));
  CHECK(scratch.read("all.csv.slurm/merge.sh") ==
        fmt::format("#!/bin/sh\n"
                    "# Merges the shards of the ppsim sweep job array once every task has ended "
                    "well.\n"
                    "#SBATCH --job-name=ppsim-sweep-merge\n"
                    "#SBATCH --ntasks=1\n"
                    "#SBATCH --output=\"{0}/merge.log\"\n"
                    "#SBATCH --partition=debug\n"
                    "#SBATCH --time=1:00:00\n"
                    "exec '{1}' merge \\\n  '{0}/shard-0.csv' \\\n  '{0}/shard-1.csv' \\\n"
                    "  '{0}/shard-2.csv' \\\n  '{0}/shard-3.csv' \\\n  -o '{2}'\n",
                    directory, binary,
                    std::filesystem::canonical(scratch.file(".")).string() + "/all.csv"));
  // The scripts run as written: every task's shard, then the merge, give the one-process file.
  for (int task = 0; task < 4; ++task)
    REQUIRE(testing::shell(scratch, fmt::format("SLURM_ARRAY_TASK_ID={} sh {} 2>/dev/null", task,
                                                array)) == 0);
  REQUIRE(testing::shell(scratch, "sh " + merge + " 2>/dev/null") == 0);
  REQUIRE(scratch.ppsim("sweep s.toml -o one.csv").exit_code == 0);
  CHECK(scratch.read("all.csv") == scratch.read("one.csv"));
}

TEST_CASE("issue_34 --slurm submits the array, then the merge after it, with sbatch") {
  // sbatch stand-ins on PATH for what this machine's Slurm answers or refuses (the real Slurm
  // runs in cli_slurm_tests): each records its arguments.
  const Scratch scratch("sweep-slurm-submit");
  write_base(scratch);
  scratch.write("s.toml", kSmallSweep);
  std::filesystem::create_directories(scratch.file("bin"));
  const auto stand_in = [&](const std::string &body) {
    scratch.write("bin/sbatch", "#!/bin/sh\necho \"$@\" >> " + scratch.file("calls.txt") + "\n" +
                                    body);
    std::filesystem::permissions(scratch.file("bin/sbatch"),
                                 std::filesystem::perms::owner_all);
    std::filesystem::remove(scratch.file("calls.txt"));
  };
  const auto submit = [&](const std::string &extra) {
    const int status = testing::shell(
        scratch, fmt::format("PATH='{}' '{}' sweep s.toml --slurm 2 -o all.csv {} >out.txt "
                             "2>err.txt",
                             scratch.file("bin"), PPSIM_BINARY, extra));
    return std::pair{status, scratch.read("out.txt") + scratch.read("err.txt")};
  };
  const std::string directory = std::filesystem::canonical(scratch.file(".")).string() +
                                "/all.csv.slurm";
  stand_in("case \"$*\" in *merge.sh) echo '42;cluster' ;; *) echo 41 ;; esac\n");
  auto [status, printed] = submit("");
  CHECK(status == 0);
  CHECK(printed == fmt::format("submitted job array 41 (2 tasks, shard i/2 each) and merge job "
                               "42 after it\nthe merged results will be written to {0}\n"
                               "shards, journals and logs: {1}\n",
                               directory.substr(0, directory.size() - 6), directory));
  CHECK(scratch.read("calls.txt") ==
        fmt::format("--parsable {0}/array.sh\n--parsable --dependency=afterok:41 "
                    "--kill-on-invalid-dep=yes {0}/merge.sh\n",
                    directory));
  CHECK_FALSE(scratch.exists("all.csv.slurm/sbatch.out"));

  stand_in("echo 'sbatch: error: invalid partition specified: gpu' >&2\nexit 1\n");
  std::tie(status, printed) = submit("--sbatch=--partition=gpu");
  CHECK(status == 1);
  CHECK(printed == "ppsim: error: field '--slurm': sbatch refused the job array: sbatch: error: "
                   "invalid partition specified: gpu\n");
  stand_in("case \"$*\" in *merge.sh) echo 'sbatch: error: too many jobs' >&2; exit 1 ;; "
           "*) echo 41 ;; esac\n");
  std::tie(status, printed) = submit("");
  CHECK(status == 1);
  CHECK(printed == fmt::format("ppsim: error: field '--slurm': job array 41 is submitted, but "
                               "sbatch refused the merge job: sbatch: error: too many jobs; "
                               "submit {}/merge.sh after it\n",
                               directory));
  stand_in("echo 'Submitted batch job 41'\n");
  std::tie(status, printed) = submit("");
  CHECK(status == 1);
  CHECK(printed == "ppsim: error: sbatch printed no job id (\"Submitted batch job 41\")\n");
  std::filesystem::remove(scratch.file("bin/sbatch"));
  std::tie(status, printed) = submit("");
  CHECK(status == 1);
  CHECK(printed == "ppsim: error: field '--slurm': sbatch did not run (is it on PATH?); give "
                   "--no-submit to write the scripts only and submit them where Slurm's "
                   "commands are\n");
}

TEST_CASE("issue_34 --slurm errors") {
  const Scratch scratch("sweep-slurm-errors");
  write_base(scratch);
  scratch.write("s.toml", kSmallSweep);
  CHECK(scratch.ppsim("sweep s.toml --slurm 2").err ==
        "ppsim: error: field '--slurm': needs an output file (-o) for the merged results\n");
  CHECK(scratch.ppsim("sweep s.toml --slurm 2 -o a.csv --shard 0/2").err ==
        "ppsim: error: field '--shard': --slurm gives each array task its own shard, resumed "
        "when requeued\n");
  CHECK(scratch.ppsim("sweep s.toml -o a.csv --no-submit").err ==
        "ppsim: error: field '--no-submit': goes with --slurm N\n");
  CHECK(scratch.ppsim("sweep s.toml --slurm 0 -o a.csv --no-submit").exit_code == 1);
  CHECK(scratch.ppsim("sweep s.toml --slurm 2 -o a.csv --sbatch partition=x --no-submit").err ==
        "ppsim: error: field '--sbatch': expected one sbatch option without spaces, such as "
        "--partition=NAME, got \"partition=x\"\n");
  CHECK(scratch.ppsim("sweep s.toml --slurm 2 -o a.csv --sbatch=--cpus-per-task=4 --no-submit")
            .err == "ppsim: error: field '--sbatch': --cpus-per-task is set by ppsim's scripts "
                    "(the array from --slurm, the CPUs from -j)\n");
  scratch.write("b.csv.slurm", ""); // a file where the job's folder goes
  CHECK(scratch.ppsim("sweep s.toml --slurm 2 -o b.csv --no-submit")
            .err.ends_with("cannot create the folder for the job's scripts, shards and logs (Not a "
                           "directory)\n"));
  CHECK_FALSE(scratch.exists("a.csv.slurm"));
  CHECK(shell_quoted("it's") == "'it'\\''s'");
  // sbatch expands % in a log path: the folder's own % is written %%.
  SlurmSweep job;
  job.ppsim = "/bin/ppsim";
  job.sweep_file = "/s.toml";
  job.output = "/r/100%.csv";
  job.directory = "/r/100%.csv.slurm";
  CHECK(slurm_scripts(job).array.find("#SBATCH --output=\"/r/100%%.csv.slurm/task-%a.log\"\n") !=
        std::string::npos);
  job.directory = "/r/a\\b";
  CHECK_THROWS_AS(slurm_scripts(job), Error);
  CHECK(parse_sbatch_job_id("123\n") == "123");
  CHECK(parse_sbatch_job_id("123;cluster\n") == "123");
  CHECK_THROWS_AS(parse_sbatch_job_id("\n"), Error);
}

} // namespace
} // namespace ppsim
