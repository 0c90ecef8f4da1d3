// Smoke test of plots/: each figure script turns a small sweep results file (or a trace) into a
// non-empty PDF (and, with --png, a PNG beside it). Skipped when /usr/bin/python3 has no
// matplotlib.
#include "tests/cli/cli_support.h"

#include <doctest/doctest.h>
#include <filesystem>

namespace ppsim {
namespace {

using testing::Scratch;

bool have_matplotlib() {
  return std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") == 0;
}

int run_script(const Scratch &scratch, const std::string &script, const std::string &arguments) {
  return std::system(fmt::format("cd '{}' && /usr/bin/python3 '{}/plots/{}' {} >script.out 2>&1",
                                 scratch.file(""), PPSIM_SOURCE_DIR, script, arguments)
                         .c_str());
}

void check_figure(const Scratch &scratch, const std::string &stem, bool png = false) {
  CHECK(scratch.exists(stem + ".pdf"));
  CHECK(scratch.exists(stem + ".png") == png);
  if (scratch.exists(stem + ".pdf")) {
    CHECK(std::filesystem::file_size(scratch.file(stem + ".pdf")) > 1000);
    CHECK(scratch.read(stem + ".pdf").rfind("%PDF", 0) == 0);
  }
}

TEST_CASE("every plot script draws a PDF from a small results file or trace") {
  if (!have_matplotlib()) {
    MESSAGE(
        "/usr/bin/python3 has no matplotlib (apt-get install python3-matplotlib): case skipped");
    return;
  }
  const Scratch scratch("plots");
  scratch.write("base.toml", "[model]\nF = 1\nB = 1\nW = 1\n[cluster]\ndevices = 4\n");
  scratch.write(
      "s.toml",
      "base = \"base.toml\"\n[axes]\n\"pipeline.schedule\" = [\"1f1b\", \"zb-h1\", \"zb-v\"]\n"
      "\"cluster.K\" = [2, 3, 4, 8]\n\"remat.policy\" = [\"none\", \"full\"]\n");
  REQUIRE(scratch.ppsim("sweep s.toml -o results.csv").exit_code == 0);
  REQUIRE(scratch.ppsim("simulate base.toml --schedule zb-h1 -m 8 --trace trace.json").exit_code ==
          0);
  const std::pair<const char *, const char *> figures[] = {{"gantt.py", "trace.json"},
                                                           {"memory.py", "trace.json"},
                                                           {"bubble_vs_k.py", "results.csv"},
                                                           {"makespan_vs_bound.py", "results.csv"},
                                                           {"ranking_vs_budget.py", "results.csv"},
                                                           {"remat_overhead.py", "results.csv"}};
  for (const auto &[script, input] : figures) {
    CAPTURE(script);
    const std::string stem = std::string(script).substr(0, std::string(script).size() - 3);
    CHECK(run_script(scratch, script, fmt::format("{} -o {}.pdf --png", input, stem)) == 0);
    check_figure(scratch, stem, true);
  }
  // A results file without the needed columns fails with one line naming them.
  scratch.write("bad.csv", "run,run_id,schedule\n0,aa,1f1b\n");
  CHECK(run_script(scratch, "makespan_vs_bound.py", "bad.csv -o bad.pdf") != 0);
  CHECK(scratch.read("script.out") ==
        "ppsim plot: error: bad.csv: missing column(s) feasible, makespan, best_lower_bound\n");
}

TEST_CASE(
    "issue_12 budget figures read byte budgets as written in scenarios and label them in GiB") {
  if (!have_matplotlib()) {
    MESSAGE(
        "/usr/bin/python3 has no matplotlib (apt-get install python3-matplotlib): case skipped");
    return;
  }
  const Scratch scratch("plots-bytes");
  scratch.write("s.toml", fmt::format("base = \"{}/scenarios/models/llama2-7b.toml\"\n[axes]\n"
                                      "\"pipeline.schedule\" = [\"1f1b\", \"zb-h1\"]\n"
                                      "\"cluster.memory\" = [\"60GiB\", \"80GiB\"]\n"
                                      "\"remat.policy\" = [\"none\", \"full\"]\n",
                                      PPSIM_SOURCE_DIR));
  REQUIRE(scratch.ppsim("sweep s.toml -o results.csv").exit_code == 0);
  for (const char *script : {"ranking_vs_budget.py", "remat_overhead.py", "bubble_vs_k.py"}) {
    CAPTURE(script);
    const std::string stem = std::string(script).substr(0, std::string(script).size() - 3);
    CHECK(run_script(scratch, script, fmt::format("results.csv -o {}.pdf", stem)) == 0);
    check_figure(scratch, stem);
  }
  // The axis is in GiB, whatever unit the budget was written in.
  const int parsed = std::system(
      fmt::format(
          "cd '{}/plots' && /usr/bin/python3 -c 'import ppsim_style as s; c = \"cluster.memory\"; "
          "assert s.budget_value({{c: \"80GiB\"}}, c) == 80; assert s.budget_value({{c: "
          "\"85899345920\"}}, c) == 80; "
          "assert s.budget_value({{c: \"1.5TiB\"}}, c) == 1536; "
          "assert s.budget_label(c) == \"memory budget per device (GiB)\"'",
          PPSIM_SOURCE_DIR)
          .c_str());
  CHECK(parsed == 0);
}

} // namespace
TEST_CASE("ppsim plot: an unforeseen script error is one line, and the old figure survives it") {
  if (!have_matplotlib()) {
    MESSAGE(
        "/usr/bin/python3 has no matplotlib (apt-get install python3-matplotlib): case skipped");
    return;
  }
  const Scratch scratch("plots-atomic");
  scratch.write("fig.pdf", "old figure");
  scratch.write(
      "r.csv",
      "run,run_id,schedule,p,m,v,remat_policy,feasible,cluster.K,bubble_ratio,span_bubble_ratio\n"
      "0,aa,1f1b,4,8,1,none,true,abc,0.1,0.1\n");
  const auto failed = scratch.ppsim("plot r.csv --kind bubble-vs-k -o fig.pdf");
  CHECK(failed.exit_code == 1);
  CHECK(failed.err == "ppsim: error: ValueError: could not convert string to float: 'abc'\n");
  CHECK(scratch.read("fig.pdf") == "old figure");
  CHECK_FALSE(scratch.exists("fig.png"));
  // No temporary file is left beside it.
  for (const auto &entry : std::filesystem::directory_iterator(scratch.file("")))
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
}

TEST_CASE("ppsim plot writes only the figure it is asked for: a PNG beside it needs --png") {
  if (!have_matplotlib()) {
    MESSAGE(
        "/usr/bin/python3 has no matplotlib (apt-get install python3-matplotlib): case skipped");
    return;
  }
  const Scratch scratch("plots-png");
  scratch.write("base.toml", "[model]\nF = 1\nB = 1\nW = 1\n[cluster]\ndevices = 4\n");
  REQUIRE(scratch.ppsim("simulate base.toml --schedule zb-h1 -m 8 --trace trace.json").exit_code ==
          0);
  scratch.write("fig.png", "the user's own picture");
  REQUIRE(scratch.ppsim("plot trace.json --kind gantt -o fig.pdf").exit_code == 0);
  check_figure(scratch, "fig", true);
  CHECK(scratch.read("fig.png") == "the user's own picture");
  REQUIRE(scratch.ppsim("plot trace.json --kind gantt -o fig.pdf --png").exit_code == 0);
  CHECK(scratch.read("fig.png").rfind("\x89PNG", 0) == 0);
}

TEST_CASE("issue_17 ppsim plot: a device input, a bad option or column, an orphan and an output "
          "that is the input") {
  const Scratch scratch("plots-hostile");
  // Refused before the script runs (no matplotlib needed).
  const auto device = scratch.ppsim("plot /dev/zero --kind gantt -o g.pdf");
  CHECK(device.exit_code == 1);
  CHECK(device.err == "ppsim: error: /dev/zero: is a device, not an input file\n");
  scratch.write(
      "r.csv",
      "run,run_id,schedule,p,m,v,remat_policy,feasible,cluster.K,bubble_ratio,span_bubble_ratio\n"
      "0,aa,1f1b,4,8,1,none,true,2,0.1,0.1\n1,bb,1f1b,4,8,1,none,true,4,0.05,0.05\n");
  const auto same = scratch.ppsim("plot r.csv --kind bubble-vs-k -o r.csv");
  CHECK(same.err == "ppsim: error: r.csv: field '-o': is the input file r.csv; write the output to "
                    "another file\n");
  if (!have_matplotlib()) {
    MESSAGE(
        "/usr/bin/python3 has no matplotlib (apt-get install python3-matplotlib): rest skipped");
    return;
  }
  const auto metric = scratch.ppsim("plot r.csv --kind bubble-vs-k -o g.pdf --metric bogus");
  CHECK(metric.exit_code == 1);
  CHECK(metric.err ==
        "ppsim: error: argument --metric: invalid choice: 'bogus' (choose from 'bubble_ratio', "
        "'span_bubble_ratio')\n");
  const auto column = scratch.ppsim("plot r.csv --kind bubble-vs-k -o g.pdf --x bogus");
  CHECK(column.exit_code == 1);
  CHECK(column.err.starts_with(
      "ppsim: error: r.csv: --x: no column 'bogus' in the file (its columns: run, run_id,"));
  // The temporary figure of a killed plot (no such process) is removed by the next one.
  scratch.write("g.tmp3999999.pdf", "half a figure");
  REQUIRE(scratch.ppsim("plot r.csv --kind bubble-vs-k -o g.pdf").exit_code == 0);
  CHECK_FALSE(scratch.exists("g.tmp3999999.pdf"));
  check_figure(scratch, "g");
}

TEST_CASE("issue_17 ppsim plot names a script that failed without its own line by its last line") {
  if (!have_matplotlib()) {
    MESSAGE(
        "/usr/bin/python3 has no matplotlib (apt-get install python3-matplotlib): case skipped");
    return;
  }
  const Scratch scratch("plots-fallback");
  std::filesystem::create_directories(scratch.file("plots"));
  scratch.write(
      "plots/gantt.py",
      "import sys\nprint('first', file=sys.stderr)\nprint('the reason', file=sys.stderr)\n"
      "sys.exit(3)\n");
  scratch.write("t.json", "{}");
  const int status = std::system(
      fmt::format("cd '{}' && PPSIM_PLOTS_DIR=plots '{}' plot t.json --kind gantt -o g.pdf "
                  ">out.txt 2>err.txt",
                  scratch.file(""), PPSIM_BINARY)
          .c_str());
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(scratch.read("err.txt") == "ppsim: error: the gantt.py script failed: the reason\n");
}

} // namespace ppsim
