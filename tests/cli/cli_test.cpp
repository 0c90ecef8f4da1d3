// The ppsim binary end to end: bad input (one line naming file, line and field, exit 1,
// no partial output file), and the PyTorch CSV round trip.
#include "cli_support.h"

#include "sim/schedules/registry.h"

#include <doctest/doctest.h>

#include <algorithm>

using ppsim::testing::check_user_error;
using ppsim::testing::CommandResult;
using ppsim::testing::Match;
using ppsim::testing::Scratch;
using ppsim::testing::shell;

TEST_CASE("issue_2 simulate prints the oracle makespan in json, csv and text") {
  const Scratch scratch("simulate");
  const CommandResult json =
      scratch.ppsim("simulate --schedule 1f1b -p 4 -m 8 --F 1 --B 1 --W 1 --format json");
  CHECK(json.exit_code == 0);
  CHECK(json.out.find("\"schedule\": \"1f1b\", \"p\": 4, \"m\": 8, \"v\": 1, \"feasible\": true, "
                      "\"makespan\": 33,") != std::string::npos);
  CHECK(json.out.find("\"peak_activations\": 4") != std::string::npos);
  const CommandResult csv =
      scratch.ppsim("simulate --schedule gpipe -p 4 -m 8 --comm 0.5 --format csv");
  CHECK(csv.exit_code == 0);
  CHECK(csv.out.rfind("schedule,p,m,v,feasible,makespan,", 0) == 0);
  CHECK(csv.out.find("\ngpipe,4,8,1,true,36,36,24,") != std::string::npos);
  const CommandResult text = scratch.ppsim("simulate -p 4 -m 8 --explain");
  CHECK(text.exit_code == 0);
  CHECK(text.out.rfind("schedule 1f1b  p=4 m=8 v=1\nmakespan 33  max span 33  ideal 24", 0) == 0);
  CHECK(text.out.find("critical path: 33 = compute 33 + transfers 0") != std::string::npos);
}

TEST_CASE("issue_2 simulate writes a Gantt SVG and a Chrome trace") {
  const Scratch scratch("outputs");
  const CommandResult result =
      scratch.ppsim("simulate -p 2 -m 3 --svg gantt.svg --trace trace.json");
  CHECK(result.exit_code == 0);
  CHECK(scratch.read("gantt.svg").find("<svg") != std::string::npos);
  CHECK(scratch.read("trace.json").find("\"traceEvents\"") != std::string::npos);
}

TEST_CASE("issue_2 scenario files set every section and flags override them") {
  const Scratch scratch("scenario");
  scratch.write(
      "s.toml",
      "[model]\nF = 1\nB = 2\nW = 0\n[cluster]\ndevices = 4\n[cluster.link]\nlatency = 1\n"
      "[pipeline]\nschedule = \"1f1b\"\nmicrobatches = 8\n");
  // Oracle table row: 1F1B p=4 m=8 F=1 B=2 c=1 -> 49.
  CHECK(scratch.ppsim("simulate s.toml --format csv").out.find("\n1f1b,4,8,1,true,49,") !=
        std::string::npos);
  CHECK(scratch.ppsim("simulate s.toml --comm 0 --format csv").out.find("\n1f1b,4,8,1,true,33,") !=
        std::string::npos);
  CHECK(scratch.ppsim("simulate s.toml --set pipeline.microbatches=4 --comm 0 --format csv")
            .out.find("\n1f1b,4,4,1,true,21,") != std::string::npos);
}

TEST_CASE("issue_2 bad parameters give one line naming the field and exit 1") {
  const Scratch scratch("bad-flags");
  check_user_error(scratch.ppsim("simulate -p 0"), "field '-p': expected an integer >= 1, got 0");
  check_user_error(scratch.ppsim("simulate -m 0"), "field '-m': expected an integer >= 1, got 0");
  check_user_error(scratch.ppsim("simulate -m abc"),
                   "field '-m': expected an integer, got \"abc\"");
  check_user_error(scratch.ppsim("simulate --F -1"),
                   "field '--F': expected a non-negative number, got -1");
  check_user_error(scratch.ppsim("simulate --B x1"), "field '--B': expected a number, got \"x1\"");
  check_user_error(scratch.ppsim("simulate --schedule 1f1c"),
                   "field '--schedule': unknown schedule '1f1c', did you mean '1f1b'?");
  check_user_error(scratch.ppsim("simulate --format yaml"),
                   "field '--format': expected text, json or csv, got \"yaml\"");
  check_user_error(scratch.ppsim("simulate --set pipeline.microbatch=3"),
                   "unknown field 'pipeline.microbatch', did you mean 'pipeline.microbatches'?");
  const CommandResult unknown_flag = scratch.ppsim("simulate --frobnicate");
  CHECK(unknown_flag.exit_code == 1);
  CHECK(unknown_flag.err.rfind("ppsim: error: unrecognised option '--frobnicate'", 0) == 0);
  const CommandResult unknown_command = scratch.ppsim("simulat");
  CHECK(unknown_command.exit_code == 1);
  CHECK(unknown_command.err == "ppsim: error: unknown command 'simulat' (see 'ppsim --help')\n");
}

TEST_CASE("issue_2 malformed scenario files name file, line and field") {
  const Scratch scratch("bad-toml");
  scratch.write("broken.toml", "[model]\nF = 1\nB = = 2\n");
  const CommandResult broken = scratch.ppsim("simulate broken.toml");
  CHECK(broken.exit_code == 1);
  CHECK(broken.err.rfind("ppsim: error: broken.toml:3: malformed TOML: ", 0) == 0);
  CHECK(broken.err.find('\n') == broken.err.size() - 1);
  scratch.write("negative.toml", "[model]\nF = 1\nB = -2\n");
  check_user_error(scratch.ppsim("simulate negative.toml"),
                   "negative.toml:3: field 'model.B': expected a non-negative number, got -2");
  scratch.write("zero.toml", "[cluster]\ndevices = 0\n");
  check_user_error(scratch.ppsim("simulate zero.toml"),
                   "zero.toml:2: field 'cluster.devices': expected an integer >= 1, got 0");
  scratch.write("typo.toml", "[pipeline]\nshedule = \"1f1b\"\n");
  check_user_error(
      scratch.ppsim("simulate typo.toml"),
      "typo.toml:2: unknown field 'pipeline.shedule', did you mean 'pipeline.schedule'?");
  scratch.write("list.toml", "[model]\nF = [1, 2, 3]\n[cluster]\ndevices = 2\n");
  check_user_error(scratch.ppsim("simulate list.toml"),
                   "list.toml:2: field 'model.F': expected 1 or 2 values (one per stage), got 3");
  check_user_error(scratch.ppsim("simulate missing.toml"),
                   "missing.toml: cannot open the scenario file");
}

TEST_CASE("issue_2 bad CSV schedules: unknown action, missing op, deadlock; no partial output") {
  const Scratch scratch("bad-csv");
  scratch.write("unknown.csv", "0F0,0X0\n1F0,1B0\n");
  check_user_error(scratch.ppsim("simulate --schedule-file unknown.csv --svg out.svg"),
                   "unknown.csv:1: action '0X0': unknown action 'X' (expected F, I, B, W, BW or a "
                   "communication action)");
  CHECK_FALSE(scratch.exists("out.svg"));
  scratch.write("missing.csv", "0F0,0B0\n1F0\n");
  check_user_error(scratch.ppsim("simulate --schedule-file missing.csv --svg out.svg"),
                   "missing.csv:2: device 1 is missing op B(1,0)");
  CHECK_FALSE(scratch.exists("out.svg"));
  // Device 1 wants F(1,1) first, which needs F(0,1), which device 0 runs after BW(0,0).
  scratch.write("cycle.csv", "0F0,0B0,0F1,0B1\n1F1,1F0,1B0,1B1\n");
  check_user_error(scratch.ppsim("simulate --schedule-file cycle.csv --trace out.json"),
                   "schedule 'file:cycle.csv' deadlocks: device 0 waits at BW(0,0) for BW(1,0); "
                   "device 1 waits at F(1,1) for F(0,1)");
  CHECK_FALSE(scratch.exists("out.json"));
}

TEST_CASE("issue_2 torch CSV round trip: export then import gives the same result") {
  const Scratch scratch("roundtrip");
  for (const ppsim::ScheduleInfo &info : ppsim::schedule_registry()) {
    CAPTURE(info.name);
    const std::string flags =
        fmt::format("--schedule {} -p 4 -m 8 --F 1 --B 2 --W 1 --comm 0.25", info.name);
    const CommandResult exported = scratch.ppsim("export " + flags + " -o s.csv");
    if (exported.exit_code != 0) {
      // Only schedules with recomputation (no PyTorch action) or unmet constraints may refuse.
      CHECK(exported.exit_code == 1);
      continue;
    }
    const CommandResult generated = scratch.ppsim("simulate " + flags + " --format json");
    const CommandResult imported =
        scratch.ppsim("simulate --schedule-file s.csv --F 1 --B 2 --W 1 --comm 0.25 --format json");
    CHECK(imported.exit_code == 0);
    const auto metrics = [](const std::string &json) {
      return json.substr(json.find("\"feasible\""));
    };
    CHECK(metrics(imported.out) == metrics(generated.out));
  }
}

TEST_CASE("issue_18 every command's --help works alone and exits 0") {
  const Scratch scratch("help");
  const CommandResult list = scratch.ppsim("--help");
  REQUIRE(list.exit_code == 0);
  std::istringstream lines(list.out);
  std::string line;
  int commands = 0;
  while (std::getline(lines, line)) {
    if (!line.starts_with("  ") || line.size() < 3 || line[2] == ' ')
      continue;
    const std::string command = line.substr(2, line.find(' ', 2) - 2);
    CAPTURE(command);
    const CommandResult help = scratch.ppsim(command + " --help");
    CHECK(help.exit_code == 0);
    CHECK(help.err.empty());
    CHECK(help.out.starts_with("ppsim " + command)); // the usage line
    ++commands;
  }
  CHECK(commands == 17);
}

TEST_CASE("issue_17 thread and size counts out of range are one line, never an abort") {
  const Scratch scratch("counts");
  check_user_error(scratch.ppsim("frontier -p 4 --threads -1"),
                   "field '--threads': expected an integer from 0 to 1024, got -1");
  check_user_error(scratch.ppsim("frontier -p 4 --threads 100000"),
                   "field '--threads': expected an integer from 0 to 1024, got 100000");
  check_user_error(scratch.ppsim("remat --auto -p 2 -m 2 --K 2 -j -1"),
                   "field '--jobs': expected an integer from 1 to 1024, got -1");
  check_user_error(scratch.ppsim("optimal -p 2 -m 2 --max-variables -1"),
                   "field '--max-variables': expected an integer from 1 to 131072, got -1");
  check_user_error(scratch.ppsim("profile --analytic --hidden -1"),
                   "field '--hidden': expected an integer from 1 to 16777216, got -1");
}

TEST_CASE("issue_17 a directory given as an input file is refused in one line") {
  const Scratch scratch("directory");
  std::filesystem::create_directories(scratch.file("folder"));
  check_user_error(scratch.ppsim("simulate folder"), "folder: is a directory, not a scenario file");
  check_user_error(scratch.ppsim("sweep folder"), "folder: is a directory, not a sweep file");
  check_user_error(scratch.ppsim("simulate --schedule-file folder"),
                   "folder: is a directory, not a schedule file");
  check_user_error(scratch.ppsim("checkpoint folder"), "folder: is a directory, not a cost file");
}

TEST_CASE("issue_17 empty or conflicting choices are one line") {
  const Scratch scratch("choices");
  check_user_error(scratch.ppsim("compare -p 4 -m 8 --schedules ''"),
                   "field '--schedules': expected at least one schedule name");
  check_user_error(scratch.ppsim("profile --analytic --peak-tflops inf"),
                   "field '--peak-tflops': expected a positive finite number");
  REQUIRE(scratch.ppsim("export --schedule zb-h1 -p 4 -m 8 -o order.csv").exit_code == 0);
  check_user_error(
      scratch.ppsim("simulate --schedule 1f1b --schedule-file order.csv"),
      "field '--schedule-file': a schedule file and a schedule ('1f1b') are both given; keep one");
}

TEST_CASE("issue_17 merge refuses a truncated shard and a missing one") {
  const Scratch scratch("merge");
  const std::string sweep = PPSIM_SOURCE_DIR "/scenarios/papers/mind_bubbles_k_sweep.toml";
  REQUIRE(scratch.ppsim("sweep " + sweep + " --shard 0/2 -o a.csv").exit_code == 0);
  REQUIRE(scratch.ppsim("sweep " + sweep + " --shard 1/2 -o b.csv").exit_code == 0);
  const CommandResult whole = scratch.ppsim("merge a.csv b.csv");
  CHECK(whole.exit_code == 0);
  CHECK(std::count(whole.out.begin(), whole.out.end(), '\n') == 81);
  check_user_error(scratch.ppsim("merge a.csv"), "run 1 is in no input: is a shard missing?");
  const std::string b = scratch.read("b.csv");
  scratch.write("cut.csv", b.substr(0, b.size() - 1));
  check_user_error(scratch.ppsim("merge a.csv cut.csv"),
                   "cut.csv:41: the last row has no line break: the file was cut short");
}

TEST_CASE("compare ranks schedules with different tick scales by their times") {
  // zb-v splits each stage into two chunks, so its ticks are half-units: 99.5 ms is 199 of its
  // ticks against zb-h1's 103. The ranking, the winner and the CSV order compare times, not ticks.
  const Scratch scratch("tick-scales");
  const std::string command = "compare -p 8 -m 32 --F 1 --B 1 --W 1 --schedules 1f1b,zb-h1,zb-v -q";
  const CommandResult text = scratch.ppsim(command);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("\nzb-v ") < text.out.find("\nzb-h1 "));
  CHECK(text.out.find("\nzb-h1 ") < text.out.find("\n1f1b "));
  CHECK(text.out.find("winner: zb-v, makespan 99.5 ms") != std::string::npos);
  const CommandResult csv = scratch.ppsim(command + " --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.find("\nnone,none,zb-v,8,32,2,true,99.5,") < csv.out.find("\nnone,none,zb-h1,"));
}

TEST_CASE("issue_27 compare says when no run fits, instead of ending without a winner") {
  const Scratch scratch("no-winner");
  const CommandResult result =
      scratch.ppsim("compare -p 4 -m 8 --F 1 --B 1 --W 1 --K 0.5 --schedules 1f1b,zb-h1 -q");
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("\nwinner:") == std::string::npos);
  CHECK(result.out.find("\nno winner: no run fits K = 0.5 (the n/a rows give the least peak a "
                        "recomputation plan reaches)\n") != std::string::npos);
}

TEST_CASE("issue_17 compare refuses an unwritable output before it prints a ranking") {
  const Scratch scratch("unwritable");
  check_user_error(scratch.ppsim("compare -p 4 -m 8 --K 4 -q --svg missing-folder/winner.svg"),
                   "missing-folder/winner.svg: field '--svg': cannot write the file", Match::start);
}

TEST_CASE("compare and report refuse an empty list of caps in one line") {
  // An empty --caps once left compare with no cap to rank under and crashed (SIGSEGV).
  const Scratch scratch("empty-caps");
  for (const char *command : {"compare", "report -o r.html"})
    for (const char *caps : {"''", ","})
      check_user_error(scratch.ppsim(std::string(command) + " " PPSIM_SOURCE_DIR
                                     "/scenarios/quickstart.toml -q --caps " + caps),
                       "field '--caps': expected at least one cap K, as K1,K2,...");
}

TEST_CASE("compare --microbatch-sizes refuses in one line what it cannot rank") {
  // docs/compare.md, "Microbatch sizes".
  const Scratch scratch("microbatch-sizes");
  REQUIRE(scratch.ppsim("profile --analytic --layers 4 --batch 1 -o b1.json").exit_code == 0);
  REQUIRE(scratch.ppsim("profile --analytic --layers 4 --batch 4 -o b4.json").exit_code == 0);
  const std::string base =
      "compare -p 2 -m 8 --schedules 1f1b --set 'model.costs_file=[\"b1.json\", \"b4.json\"]' ";
  check_user_error(scratch.ppsim(base + "--microbatch-size 2 --microbatch-sizes 1,3"),
                   "field '--microbatch-sizes': a batch of m x b = 8 x 2 = 16 samples is not a "
                   "whole number of microbatches of size 3");
  check_user_error(scratch.ppsim(base + "--microbatch-sizes 1,2"),
                   "field 'model.costs_file': 2 cost files are given (microbatch sizes 1, 4): set "
                   "pipeline.microbatch_size to the size the run uses");
  check_user_error(scratch.ppsim("compare -p 2 -m 8 --microbatch-sizes 1,2"),
                   "field 'pipeline.microbatch_size': ranking microbatch sizes keeps the batch of "
                   "m x b samples: give the run's size b and cost files at the sizes ranked "
                   "(model.costs_file)");
  // One file: the run's size is the one it records, and the file is read at that size only.
  const std::string one = "compare -p 2 -m 8 --schedules 1f1b --set model.costs_file=b4.json ";
  CHECK(scratch.ppsim(one + "--microbatch-sizes 4 -q").out.find(
            "winner: 1f1b at microbatch size 4 (m = 8)") != std::string::npos);
  check_user_error(scratch.ppsim(one + "--microbatch-sizes 4,2 -q"),
                   "field '--microbatch-sizes': b4.json was profiled at microbatch size 4, not 2: "
                   "kernels are not linear in the size; profile at 2, or give files at sizes "
                   "around it (model.costs_file = [...])");
  check_user_error(scratch.ppsim(base + "--microbatch-size 2 --microbatch-sizes 1,2 --caps 4"),
                   "field '--microbatch-sizes': ranking microbatch sizes needs the memory as a "
                   "byte budget (cluster.memory): a cap K counts microbatches, each of b samples, "
                   "so it is not one memory across sizes");
  check_user_error(scratch.ppsim(base + "--microbatch-size 2 --microbatch-sizes 1,2,1"),
                   "field '--microbatch-sizes': microbatch size 1 is given twice");
  check_user_error(scratch.ppsim(base + "--microbatch-size 2 --microbatch-sizes 1,2 --F 3"),
                   "field '--F': is one microbatch's cost at one size: ranking microbatch sizes "
                   "reads every cost from the cost files at each size");
  check_user_error(scratch.ppsim(base + "--microbatch-size 2 --microbatch-sizes ,"),
                   "field '--microbatch-sizes': expected at least one size, as B1,B2,...");
  check_user_error(scratch.ppsim(base + "--microbatch-size 2 --microbatch-sizes 0"),
                   "field '--microbatch-sizes': expected an integer >= 1, got 0");
  // A size the files do not bracket is refused before any ranking.
  check_user_error(scratch.ppsim(base + "--microbatch-size 2 --microbatch-sizes 2,8"),
                   "field '--microbatch-sizes': microbatch size 8 is outside the sizes the cost "
                   "files were profiled at (1, 4): kernels are not linear in the size, so ppsim "
                   "interpolates between measured sizes and does not extrapolate; profile at 8");
}

TEST_CASE("errors keep their place and stay one line") {
  const Scratch scratch("error-lines");
  // An unknown schedule in a list option names the option.
  check_user_error(scratch.ppsim("report " PPSIM_SOURCE_DIR
                                 "/scenarios/quickstart.toml -o r.html --schedules zb-h3"),
                   "field '--schedules': unknown schedule 'zb-h3', did you mean 'zb-h1'?");
  check_user_error(scratch.ppsim("remat --auto -p 2 -m 4 --K 1 --candidates 1f1b,bogus"),
                   "field '--candidates': unknown schedule 'bogus' (see 'ppsim schedules')");
  // More stages than the cost file has layers: the file and the option.
  const std::string costs = PPSIM_SOURCE_DIR "/scenarios/models/llama2-7b.csv";
  for (const char *command : {"checkpoint", "partition"})
    check_user_error(scratch.ppsim(std::string(command) + " " + costs + " --stages 100"),
                     costs + ": field '--stages': the cost file has 34 layers, fewer than the "
                             "100 stages");
  // A --set with no key names --set, not an empty field.
  CHECK(scratch.ppsim("simulate --set =3").err ==
        "ppsim: error: field '--set': expected KEY=VALUE, got \"=3\"\n");
  scratch.write("p.toml", "[remat]\npolicy = \"most\"\n");
  CHECK(scratch.ppsim("simulate p.toml -p 2 -m 2").err ==
        "ppsim: error: p.toml:2: field 'remat.policy': unknown remat policy 'most' (expected none, "
        "full, selective, "
        "ilp or file:PATH)\n");
  // An explicit split that does not fit the cost file is blamed on where it was written.
  scratch.write("split.toml",
                "[model]\ncosts_file = \"" PPSIM_SOURCE_DIR "/scenarios/models/llama2-7b.csv\"\n"
                "partition = [1, 1]\n");
  CHECK(scratch.ppsim("simulate split.toml -p 2 -m 2").err ==
        "ppsim: error: split.toml:3: field 'model.partition': the stages hold 2 layers but the "
        "cost file has 34 (" +
            std::string(PPSIM_SOURCE_DIR) + "/scenarios/models/llama2-7b.csv)\n");
  // A newline given to --set, and a control character, are shown escaped.
  CHECK(scratch.ppsim("simulate -p 2 -m 2 --set \"$(printf 'model.F=1\\n2')\"").err ==
        "ppsim: error: field 'model.F': expected a number, got \"1\\n2\"\n");
  CHECK(scratch.ppsim("simulate --schedule \"$(printf 'a\\001b')\"").err ==
        "ppsim: error: field '--schedule': unknown schedule 'a\\x01b' (see 'ppsim schedules')\n");
}

TEST_CASE("ppsim --version prints the version and the commit") {
  const Scratch scratch("version");
  const CommandResult result = scratch.ppsim("--version");
  CHECK(result.exit_code == 0);
  CHECK(result.out.starts_with("ppsim 0.1.0 (commit "));
  CHECK(result.out.ends_with(")\n"));
  CHECK(result.out.find("commit )") == std::string::npos); // a commit (or "unknown") is named
}

TEST_CASE("issue_18 ppsim --version names the commit the binary was built from") {
  const Scratch scratch("version-commit");
  // The build reads the commit at every build, as this does now; "unknown" outside git.
  const bool in_git = shell(scratch, "git -C '" PPSIM_SOURCE_DIR
                                     "' rev-parse --short=12 HEAD > head.txt 2>/dev/null") == 0;
  std::string head = scratch.read("head.txt");
  head.erase(head.find_last_not_of('\n') + 1);
  const CommandResult version = scratch.ppsim("--version");
  CHECK(version.exit_code == 0);
  if (!in_git) {
    CHECK(version.out == "ppsim 0.1.0 (commit unknown)\n");
    return;
  }
  REQUIRE(head.size() == 12);
  // "-modified" when tracked files differed from the commit at build time.
  CHECK((version.out == "ppsim 0.1.0 (commit " + head + ")\n" ||
         version.out == "ppsim 0.1.0 (commit " + head + "-modified)\n"));
}

TEST_CASE("issue_18 compare reports each recomputation run on stderr; -q silences it") {
  const Scratch scratch("compare-progress");
  const CommandResult lines = scratch.ppsim("compare --schedules 1f1b -p 4 -m 8 --K 2");
  REQUIRE(lines.exit_code == 0);
  CHECK(lines.err == "ppsim: compare: 1/2 runs (1f1b + full, K = 2)\n"
                     "ppsim: compare: 2/2 runs (1f1b + ilp, K = 2)\n"
                     "ppsim: wrote the ranking of 3 runs to standard output\n");
  const CommandResult files =
      scratch.ppsim("compare --schedules 1f1b,zb-h1 -p 4 -m 8 --K 8 --svg w.svg --plan p.csv");
  REQUIRE(files.exit_code == 0);
  // Both fit without recomputation: their runs with full and ilp are settled at once; every
  // file is named.
  CHECK(files.err == "ppsim: compare: 4/4 runs (K = 8: 2 schedules fit as they are or cannot "
                     "run)\n"
                     "ppsim: wrote the ranking of 2 runs to standard output, the Gantt chart to "
                     "w.svg, the recomputation plan to p.csv\n");
  // A byte budget is named as the table heads it, not as a count-model K.
  const CommandResult budget = scratch.ppsim(
      fmt::format("compare {}/scenarios/models/llama3-8b.toml --memory 24GiB --schedules 1f1b "
                  "--remat none,full",
                  PPSIM_SOURCE_DIR));
  REQUIRE(budget.exit_code == 0);
  CHECK(budget.out.starts_with("model llama3-8b  budget 24 GiB  (p=8 m=64)\n"));
  CHECK(budget.err == "ppsim: compare: 1/1 runs (1f1b + full, budget 24 GiB)\n"
                      "ppsim: wrote the ranking of 2 runs to standard output\n");
  const CommandResult quiet = scratch.ppsim("compare --schedules 1f1b -p 4 -m 8 --K 2 -q");
  CHECK(quiet.err.empty());
  CHECK(quiet.out == lines.out);
}

TEST_CASE("issue_17 remat --auto refuses the files of one plan and an empty candidate list") {
  const Scratch scratch("remat-auto");
  check_user_error(
      scratch.ppsim("remat -p 2 -m 4 --K 2 --auto --svg x.svg"),
      "field '--svg': writes the plan of one schedule and --auto ranks several: run `ppsim remat "
      "--schedule WINNER` with it after --auto names the winner");
  check_user_error(
      scratch.ppsim("remat -p 2 -m 4 --K 2 --auto --lp m.lp"),
      "field '--lp': writes the plan of one schedule and --auto ranks several: run `ppsim remat "
      "--schedule WINNER` with it after --auto names the winner");
  check_user_error(scratch.ppsim("remat -p 2 -m 4 --K 2 --auto --candidates ''"),
                   "field '--candidates': expected comma-separated schedule names, got \"\"");
  check_user_error(scratch.ppsim("remat -p 2 -m 4 --K 2 --auto --candidates 1f1b,"),
                   "field '--candidates': expected comma-separated schedule names, got \"1f1b,\"");
  check_user_error(scratch.ppsim("remat -p 2 -m 4 --K 2 --candidates 1f1b"),
                   "field '--candidates': lists the schedules --auto ranks; give --auto");
}

TEST_CASE(
    "issue_17 lynx and partition refuse a bad bubble and a budget no stage meets before printing") {
  const Scratch scratch("lynx-inputs");
  const std::string costs = PPSIM_SOURCE_DIR "/scenarios/models/gpt-1.5b.csv";
  for (const char *value : {"nan", "-5", "inf"}) {
    check_user_error(
        scratch.ppsim(
            fmt::format("lynx {} --stages 2 --bubble-ms {} --memory 20GiB", costs, value)),
        fmt::format("field '--bubble-ms': expected a finite non-negative number of ms, got {}",
                    value));
    check_user_error(
        scratch.ppsim(fmt::format("partition {} --stages 2 --bubble-ms {}", costs, value)),
        fmt::format("field '--bubble-ms': expected a finite non-negative number of ms, got {}",
                    value));
  }
  check_user_error(scratch.ppsim(fmt::format("lynx {} --stages 2 --memory 1B", costs)),
                   "field '--memory': 1B is below what every stage holds with every activation "
                   "recomputed (the least is stage ",
                   Match::start);
}

TEST_CASE("issue_17 merge tells that the last shard is missing") {
  const Scratch scratch("merge-last");
  scratch.write("s.toml", "[axes]\n\"pipeline.microbatches\" = [4, 8, 12, 16]\n");
  for (int shard = 0; shard < 4; ++shard) {
    REQUIRE(scratch.ppsim(fmt::format("sweep s.toml --shard {}/4 -o f{}.csv", shard, shard))
                .exit_code == 0);
  }
  const std::string last = scratch.read("f3.csv");
  CHECK(std::count(last.begin(), last.end(), '\n') == 2);
  const CommandResult all = scratch.ppsim("merge f0.csv f1.csv f2.csv f3.csv");
  CHECK(all.exit_code == 0);
  CHECK(std::count(all.out.begin(), all.out.end(), '\n') == 5);
  check_user_error(scratch.ppsim("merge f0.csv f1.csv f2.csv"),
                   "run 3 is in no input (the sweep has 4 points): is a shard missing?");
}

#define QUICKSTART PPSIM_SOURCE_DIR "/scenarios/quickstart.toml"

TEST_CASE("issue_17 exact times past 2^53 ticks print every digit in text, CSV and JSON") {
  const Scratch scratch("exact-print");
  // 8 microbatches of F = 1e15 with a 0.05 latency: 11000000000000022.8 is no double.
  const CommandResult csv = scratch.ppsim("simulate " QUICKSTART " --F 1e15 --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.find(",11000000000000022.8,") != std::string::npos);
  const CommandResult json = scratch.ppsim("simulate " QUICKSTART " --F 1e15 --format json");
  REQUIRE(json.exit_code == 0);
  CHECK(json.out.find("\"makespan\": 11000000000000022.8,") != std::string::npos);
  CHECK(json.out.find("e+16") == std::string::npos);
  const CommandResult text = scratch.ppsim("simulate " QUICKSTART " --F 1e15");
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("makespan 11000000000000023 ") != std::string::npos);
  // A 10^12 scale: 80008.000000000008 under exact_time, not 80008.
  const CommandResult fine =
      scratch.ppsim("simulate " QUICKSTART " --F 1e-12 --B 1e4 --format json");
  REQUIRE(fine.exit_code == 0);
  CHECK(fine.out.find("\"ideal\": 80008.000000000008,") != std::string::npos);
  CHECK(fine.out.find("\"exact_time\": true") != std::string::npos);
}

TEST_CASE("issue_17 v-auto takes a --K past 32 bits") {
  const Scratch scratch("v-auto-k");
  const CommandResult huge =
      scratch.ppsim("simulate " QUICKSTART " --schedule v-auto --K 1e15 --format csv");
  const CommandResult level =
      scratch.ppsim("simulate " QUICKSTART " --schedule v-auto --K 8 --format csv");
  CHECK(huge.exit_code == 0);
  CHECK(huge.err.empty());
  const auto makespan = [](const std::string &out) { return out.substr(out.find('\n') + 1); };
  CHECK(makespan(huge.out).substr(0, 40) == makespan(level.out).substr(0, 40));
  CHECK(scratch.ppsim("frontier -p 4 --K 3e9").exit_code == 0);
}

TEST_CASE("issue_17 size guards refuse before allocating, in one line naming the option") {
  const Scratch scratch("size-guards");
  check_user_error(scratch.ppsim("frontier -p 1000"),
                   "field '-p': schedule 'v-auto' (and ppsim frontier) searches at most 32 "
                   "devices, got 1000: its "
                   "building-block search grows steeply with p (p = 64 takes over a minute)");
  const CommandResult ilp =
      scratch.ppsim("remat " QUICKSTART " -p 256 -m 512 --schedule interleaved-zb --time-limit 5");
  CHECK(ilp.exit_code == 1);
  CHECK(ilp.err.find("the remat ILP of schedule 'interleaved-zb' is too large") !=
        std::string::npos);
  CHECK(ilp.err.find("(-m) or devices (-p)") != std::string::npos);
  CHECK(std::count(ilp.err.begin(), ilp.err.end(), '\n') == 1);
  check_user_error(
      scratch.ppsim("optimal " QUICKSTART " -p 32 -m 256 --max-variables 1099511627776"),
      "field '--max-variables': expected an integer from 1 to 131072, got 1099511627776");
}

// AddressSanitizer reserves terabytes of address space up front, so a binary built with it cannot
// start under `ulimit -v`: the case is skipped (and reported so) in that build.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

TEST_CASE("issue_17 running out of memory or threads is one clear line, exit 1" *
          doctest::skip(kAddressSanitizer)) {
  const Scratch scratch("oom");
  // 300 MB of address space: the allocation or the thread fails, ppsim says so in one line.
  const CommandResult result =
      scratch.ppsim("--version >/dev/null; ulimit -v 300000; '" PPSIM_BINARY
                    "' simulate -p 1000 -m 20000 --format csv");
  if (result.exit_code != 0) {
    CHECK(result.exit_code == 1);
    CHECK(result.err.find("internal error") == std::string::npos);
    CHECK(result.err.rfind("ppsim: error: out of memory while running 'ppsim simulate'", 0) == 0);
  }
}

TEST_CASE("issue_17 refusals say the real reason and name the field") {
  const Scratch scratch("reasons");
  check_user_error(scratch.ppsim("simulate --F 1e-300"),
                   "field '--F': 1e-300 is below the finest time ppsim represents exactly (10^-18 "
                   "of the time unit)");
  check_user_error(scratch.ppsim("simulate --F 1e300"),
                   "field '--F': 1e+300 is above the largest time ppsim reads exactly (about "
                   "9.2e18 of the time unit)");
  check_user_error(
      scratch.ppsim("simulate --set model.F='\"1.2345678901234567891\"'"),
      "field 'model.F': \"1.2345678901234567891\" has more than 18 significant digits, the most an "
      "exact duration takes");
  check_user_error(scratch.ppsim("lynx " PPSIM_SOURCE_DIR
                                 "/scenarios/models/llama2-7b.csv --stages 4 --milp-seconds 1e300"),
                   "field '--milp-seconds': expected a number of seconds above 0 and at most "
                   "1000000, got 1e+300");
  const CommandResult transfer =
      scratch.ppsim("simulate " QUICKSTART " --bandwidth 1B/s --set model.memory.out_bytes=5e14");
  CHECK(transfer.exit_code == 1);
  CHECK(transfer.err ==
        "ppsim: error: field 'model.memory.out_bytes': a transfer of 5e+14 bytes at 1 bytes/s "
        "takes 5e+14 s, beyond the range ppsim times exactly (2^62 ticks of the run's ms scale); "
        "use a smaller size or a larger bandwidth\n");
  const CommandResult longer =
      scratch.ppsim("simulate " QUICKSTART " --bandwidth 1B/s --set model.memory.out_bytes=1e16");
  CHECK(longer.exit_code == 1);
  CHECK(longer.err.find("field 'model.memory.out_bytes': a transfer of 1e+16 bytes") !=
        std::string::npos);
  check_user_error(
      scratch.ppsim("simulate " QUICKSTART " --set model.memory.mem_f=1e308 --memory-model zb"),
      "field 'model.memory.mem_f': 1e+308 is out of range: memory amounts are at most 2^60 (about "
      "1.15e18)");
}

TEST_CASE("issue_32 options a command cannot honour are refused where they were given") {
  const Scratch scratch("silent-accepts");
  const std::string no_remat = "searches orders without recomputation; `ppsim compare` ranks "
                               "schedules with recomputation plans";
  // issue_28: synthesize chooses R, RW and RBW itself; only `none` (search without them) fits it.
  check_user_error(scratch.ppsim("synthesize -p 2 -m 2 --remat full"),
                   "field '--remat': synthesize chooses the recomputation of each (stage, "
                   "microbatch) itself; give --remat none to search orders without it");
  // Its search takes checkpoint levels, but not beside --remat none (issue_28).
  check_user_error(scratch.ppsim("synthesize " PPSIM_SOURCE_DIR
                                 "/scenarios/models/gpt-1.5b.toml --checkpoint-levels 2 --remat "
                                 "none"),
                   "field '--checkpoint-levels': checkpoint levels are recomputation, which "
                   "--remat none leaves out");
  check_user_error(scratch.ppsim("optimal " PPSIM_SOURCE_DIR
                                 "/scenarios/models/gpt-1.5b.toml --checkpoint-levels 2"),
                   "field '--checkpoint-levels': optimal recomputes whole stages (R, RW, RBW), "
                   "not checkpoint levels; `ppsim compare` ranks plans with levels");
  // The exact optimum chooses R, RW and RBW per (s,j): no policy, not even none, applies.
  for (const std::string policy : {"ilp", "none"})
    check_user_error(scratch.ppsim("optimal -p 2 -m 2 --K 1 --remat " + policy),
                     "field '--remat': optimal chooses the recomputation of each (stage, "
                     "microbatch) itself");
  check_user_error(scratch.ppsim("frontier -p 4 -m 8 --set remat.policy=full"),
                   "field 'remat.policy': frontier " + no_remat);
  check_user_error(scratch.ppsim("frontier " QUICKSTART " --schedule-file order.csv"),
                   "field '--schedule-file': frontier searches v-auto's building blocks; it takes "
                   "no schedule");
  check_user_error(scratch.ppsim("frontier -p 4 -m 8 --schedule zb-v"),
                   "field '--schedule': frontier searches v-auto's building blocks; it takes no "
                   "schedule");
  // A scenario file's schedule is for the other commands that read the file.
  CHECK(scratch.ppsim("frontier " QUICKSTART " -q").exit_code == 0);
  CHECK(scratch.ppsim("synthesize -p 2 -m 2 --remat none").exit_code == 0);
  // Checkpoint levels need a cost file, in every command, and a plan that can use them.
  check_user_error(scratch.ppsim("simulate " PPSIM_SOURCE_DIR
                                 "/scenarios/models/gpt-1.5b.toml --checkpoint-levels 2"),
                   "field '--checkpoint-levels': checkpoint levels are options of a remat plan: "
                   "give --remat ilp or a plan file (--remat file:PLAN)");
  for (const std::string command : {"simulate " QUICKSTART " --checkpoint-levels 2",
                                    "simulate " QUICKSTART " --remat ilp --checkpoint-levels 2",
                                    "compare " QUICKSTART " --checkpoint-levels 2",
                                    "synthesize " QUICKSTART " --checkpoint-levels 2",
                                    "bounds " QUICKSTART " --checkpoint-levels 2"}) {
    CAPTURE(command);
    check_user_error(scratch.ppsim(command),
                     "field '--checkpoint-levels': checkpoint levels come from a per-layer cost "
                     "file: give model.costs_file");
  }
}
