// The ppsim binary's output files end to end (docs/reliability.md, "Outputs"): written whole or not
// at all, every output checked before any work, links, devices and standard output written in
// place, an output that is an input refused.
#include "cli_support.h"

#include <doctest/doctest.h>

#include <algorithm>

using ppsim::testing::check_user_error;
using ppsim::testing::CommandResult;
using ppsim::testing::Match;
using ppsim::testing::Scratch;
using ppsim::testing::shell;

TEST_CASE("issue_17 a failed write to standard output is an error, not a success") {
  REQUIRE(std::filesystem::exists("/dev/full")); // Linux's always-full device
  const Scratch scratch("full");
  const std::string command = fmt::format("'{}' simulate -p 4 -m 8 >/dev/full 2>'{}'", PPSIM_BINARY,
                                          scratch.file("err.txt"));
  const int status = std::system(command.c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(scratch.read("err.txt") == "ppsim: error: cannot write to standard output\n");
}

TEST_CASE("outputs keep a symbolic link and the file's permissions, write devices in place, clear "
          "orphans") {
  const Scratch scratch("output-kinds");
  const std::string csv = "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n";
  // Through a link: the target gets the bytes, the link stays a link.
  scratch.write("real.csv", "old\n");
  std::filesystem::create_symlink("real.csv", scratch.file("link.csv"));
  REQUIRE(scratch.ppsim("export --schedule 1f1b -p 2 -m 2 -o link.csv").exit_code == 0);
  CHECK(std::filesystem::is_symlink(scratch.file("link.csv")));
  CHECK(scratch.read("real.csv") == csv);
  // A replaced file keeps its mode.
  scratch.write("private.csv", "old\n");
  std::filesystem::permissions(scratch.file("private.csv"),
                               std::filesystem::perms::owner_read |
                                   std::filesystem::perms::owner_write);
  REQUIRE(scratch.ppsim("export --schedule 1f1b -p 2 -m 2 -o private.csv").exit_code == 0);
  CHECK(std::filesystem::status(scratch.file("private.csv")).permissions() ==
        (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  // A temporary file of a killed writer (no such process) is removed by the next write.
  scratch.write("out.csv.tmp3999999", "half");
  REQUIRE(scratch.ppsim("export --schedule 1f1b -p 2 -m 2 -o out.csv").exit_code == 0);
  CHECK_FALSE(scratch.exists("out.csv.tmp3999999"));
  // /dev/stdout is written in place, never replaced (it is a link to the process's own stream).
  const CommandResult device = scratch.ppsim("export --schedule 1f1b -p 2 -m 2 -o /dev/stdout");
  CHECK(device.exit_code == 0);
  CHECK(device.out.find(csv) == 0);
  CHECK(std::filesystem::is_symlink("/dev/stdout"));
  // `-o -` is standard output.
  const CommandResult dash = scratch.ppsim("export --schedule 1f1b -p 2 -m 2 -o -");
  CHECK(dash.exit_code == 0);
  CHECK(dash.out == csv);
  CHECK_FALSE(scratch.exists("-"));
}

TEST_CASE(
    "issue_17 an output that is already our standard output is written in place, never replaced") {
  const Scratch scratch("stdout-in-place");
  const std::string csv = "0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n";
  const std::string exported = fmt::format("'{}' export --schedule 1f1b -p 2 -m 2", PPSIM_BINARY);
  // The shell's file around the output keeps what others wrote before and after it.
  for (const char *target : {"/dev/stdout", "/proc/self/fd/1", "/dev/fd/1", "grp.txt", "-"}) {
    CAPTURE(target);
    REQUIRE(shell(scratch, fmt::format("{{ echo HEADER; {} -o {}; echo FOOTER; }} > grp.txt",
                                       exported, target)) == 0);
    CHECK(scratch.read("grp.txt") == "HEADER\n" + csv + "FOOTER\n");
  }
  scratch.write("app.txt", "old\n");
  REQUIRE(shell(scratch, fmt::format("{} -o /dev/stdout >> app.txt", exported)) == 0);
  CHECK(scratch.read("app.txt") == "old\n" + csv);
  // A descriptor the shell opened, and standard error.
  REQUIRE(shell(scratch, fmt::format("{} -o /dev/fd/3 3> three.txt", exported)) == 0);
  CHECK(scratch.read("three.txt") == csv);
  scratch.write("log.txt", "log\n");
  REQUIRE(shell(scratch, fmt::format("{} -o /dev/stderr 2>> log.txt", exported)) == 0);
  CHECK(scratch.read("log.txt") == "log\n" + csv);
  // A descriptor that is not open is one line.
  CHECK(shell(scratch, fmt::format("{} -o /dev/fd/7 2> err.txt", exported)) == 1);
  CHECK(scratch.read("err.txt") == "ppsim: error: /dev/fd/7: field '-o': cannot write the file: "
                                   "descriptor 7 is not open for writing\n");
  // A dangling link: its target is created, the link stays a link.
  std::filesystem::create_symlink("target.csv", scratch.file("dangling.csv"));
  REQUIRE(scratch.ppsim("export --schedule 1f1b -p 2 -m 2 -o dangling.csv").exit_code == 0);
  CHECK(std::filesystem::is_symlink(scratch.file("dangling.csv")));
  CHECK(scratch.read("target.csv") == csv);
}

TEST_CASE("issue_17 every output is checked before any is written or anything printed") {
  const Scratch scratch("outputs-first");
  check_user_error(scratch.ppsim("simulate -p 2 -m 2 --svg a.svg --trace missing/x.json"),
                   "missing/x.json: field '--trace': cannot write the file", Match::start);
  CHECK_FALSE(scratch.exists("a.svg"));
  // profile import and merge refuse before they read (or print) anything.
  check_user_error(scratch.ppsim("profile import trace.json -o missing/c.csv"),
                   "missing/c.csv: field '-o': cannot write the file", Match::start);
  check_user_error(scratch.ppsim("profile import trace.json --links missing/l.csv"),
                   "missing/l.csv: field '--links': cannot write the file", Match::start);
  check_user_error(scratch.ppsim("profile merge r0.csv -o missing/c.csv"),
                   "missing/c.csv: field '-o': cannot write the file", Match::start);
  const CommandResult analytic = scratch.ppsim("profile --analytic -o missing/c.csv");
  CHECK(analytic.exit_code == 1);
  CHECK(analytic.out.empty());
  check_user_error(scratch.ppsim("remat -p 2 -m 2 --K 2 --plan missing/p.csv"),
                   "missing/p.csv: field '--plan': cannot write the file", Match::start);
  // A folder is not a file to replace.
  std::filesystem::create_directories(scratch.file("folder"));
  check_user_error(scratch.ppsim("export -p 2 -m 2 -o folder"),
                   "folder: field '-o': cannot write the file: it is a folder");
  // Two outputs naming one file.
  check_user_error(
      scratch.ppsim("simulate -p 2 -m 2 --svg same.out --trace same.out"),
      "same.out: field '--trace': is also the output of --svg; give each output its own file");
}

TEST_CASE("issue_17 an output that is one of the command's inputs is refused") {
  const Scratch scratch("output-is-input");
  scratch.write("base.toml", "[pipeline]\nschedule = \"1f1b\"\n[cluster]\ndevices = 2\n");
  const std::string sweep = "base = \"base.toml\"\n[axes]\n\"pipeline.microbatches\" = [4, 8]\n";
  scratch.write("sw.toml", sweep);
  check_user_error(
      scratch.ppsim("sweep sw.toml -o sw.toml"),
      "sw.toml: field '-o': is the input file sw.toml; write the output to another file");
  CHECK(scratch.read("sw.toml") == sweep);
  const CommandResult base = scratch.ppsim("sweep sw.toml -o base.toml");
  CHECK(base.exit_code == 1);
  CHECK(base.err.starts_with("ppsim: error: base.toml: field '-o': is the input file "));
  CHECK(base.err.ends_with("base.toml; write the output to another file\n"));
  // Through a link, and for the other commands.
  std::filesystem::create_symlink("base.toml", scratch.file("link.toml"));
  check_user_error(
      scratch.ppsim("simulate base.toml --svg link.toml"),
      "link.toml: field '--svg': is the input file base.toml; write the output to another file");
  check_user_error(
      scratch.ppsim("export base.toml -m 2 -o base.toml"),
      "base.toml: field '-o': is the input file base.toml; write the output to another file");
  REQUIRE(scratch.ppsim("sweep sw.toml -o r.csv").exit_code == 0);
  check_user_error(scratch.ppsim("merge r.csv -o r.csv"),
                   "r.csv: field '-o': is the input file r.csv; write the output to another file");
  CHECK(scratch.read("base.toml").starts_with("[pipeline]"));
}

TEST_CASE("issue_17 --help and --version fail on a failed write to standard output") {
  for (const char *arguments : {"--help", "--version"}) {
    const int status =
        std::system(fmt::format("'{}' {} >/dev/full 2>/dev/null", PPSIM_BINARY, arguments).c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
  }
}

TEST_CASE("issue_27 a missing cost file is one error line naming it, in every command") {
  Scratch scratch("missing-costs");
  scratch.write("s.toml", "[model]\ncosts_file = \"gone.csv\"\n[cluster]\ndevices = 4\n"
                          "[pipeline]\nmicrobatches = 8\n");
  scratch.write("sweep.toml", "base = \"s.toml\"\n[axes]\n\"pipeline.microbatches\" = [8, 16]\n");
  // Where the file was named, in the scenario file (or from the sweep's base).
  const std::string message = "s.toml:2: field 'model.costs_file': gone.csv: cannot open the cost file";
  for (const std::string command :
       {"simulate s.toml", "compare s.toml", "compare s.toml --report page.html",
        "report s.toml -o page.html", "remat s.toml --auto", "remat s.toml --schedule zb-h1",
        "bounds s.toml", "sweep sweep.toml -o rows.csv"}) {
    CAPTURE(command);
    check_user_error(scratch.ppsim(command), message);
  }
  CHECK_FALSE(scratch.exists("page.html"));
  CHECK_FALSE(scratch.exists("rows.csv"));
}
