// Sweep files (docs/sweep.md, "Sweep files"): expansion order, zip groups, stable ids, shards, the
// results row and errors located at file:line.
#include "run/sweep.h"

#include "base/error.h"
#include "run/compare.h"
#include "run/prepare.h"
#include "run/scenario_file.h"

#include <doctest/doctest.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <string>

namespace ppsim {
namespace {

Sweep sweep_from(const std::string &text) {
  return parse_sweep(text, "sweep.toml", "", [](const std::string &path) {
    REQUIRE(path == "base.toml");
    return parse_scenario(
        "[pipeline]\nschedule = \"gpipe\"\nmicrobatches = 4\n[cluster]\ndevices = 2\n", path);
  });
}

std::string error_of(const std::string &text) {
  try {
    (void)sweep_from(text);
  } catch (const Error &error) {
    return error.what();
  }
  return "no error";
}

std::vector<std::string> values_at(const Sweep &sweep, std::size_t index) {
  return sweep.point(index).values;
}

TEST_CASE("a grid of more points than the limit is one error, not a wrapped count") {
  // Six axes of 256 values: 2^48 points, past the 2^40 limit (the count used to wrap to 0).
  std::string axes;
  for (const char *key : {"pipeline.microbatches", "cluster.devices", "pipeline.chunks", "model.F",
                          "model.B", "model.W"}) {
    axes += fmt::format("\"{}\" = [", key);
    for (int value = 1; value <= 256; ++value)
      axes += fmt::format("{}{}", value == 1 ? "" : ", ", value);
    axes += "]\n";
  }
  CHECK(error_of("base = \"base.toml\"\n[axes]\n" + axes) ==
        "sweep.toml: the axes make more than 1099511627776 points (the product of their lengths); "
        "split the sweep");
  // Five of them, 2^40 exactly, are taken.
  const std::string five = axes.substr(0, axes.rfind("\"model.W\""));
  CHECK(sweep_from("base = \"base.toml\"\n[axes]\n" + five).size() == std::size_t{1} << 40);
}

TEST_CASE("a product sweep varies the last declared axis fastest") {
  // Keys declared in the order m, schedule, p (not alphabetical): the declaration order wins.
  const Sweep sweep = sweep_from(R"(base = "base.toml"
[axes]
"pipeline.microbatches" = [8, 16]
"pipeline.schedule" = ["1f1b", "zb-h1", "gpipe"]
"cluster.devices" = [2, 4]
)");
  CHECK(sweep.size() == 12);
  CHECK(sweep.parameter_names() ==
        std::vector<std::string>{"pipeline.microbatches", "pipeline.schedule", "cluster.devices"});
  CHECK(values_at(sweep, 0) == std::vector<std::string>{"8", "1f1b", "2"});
  CHECK(values_at(sweep, 1) == std::vector<std::string>{"8", "1f1b", "4"});
  CHECK(values_at(sweep, 2) == std::vector<std::string>{"8", "zb-h1", "2"});
  CHECK(values_at(sweep, 6) == std::vector<std::string>{"16", "1f1b", "2"});
  CHECK(values_at(sweep, 11) == std::vector<std::string>{"16", "gpipe", "4"});
  const SweepPoint point = sweep.point(5);
  CHECK(point.input.microbatches == 8);
  CHECK(point.input.schedule == "gpipe");
  CHECK(point.input.devices == 4);
  CHECK(point.input.origins.at("cluster.devices").file == "sweep.toml");
  CHECK(point.input.origins.at("cluster.devices").line == 5);
}

TEST_CASE("fields not swept keep the base scenario's values") {
  const Sweep sweep = sweep_from("base = \"base.toml\"\n[axes]\n\"cluster.devices\" = [3]\n");
  const SweepPoint point = sweep.point(0);
  CHECK(point.input.schedule == "gpipe");
  CHECK(point.input.microbatches == 4);
  CHECK(point.input.devices == 3);
}

TEST_CASE("a zip group advances together as one axis of the product") {
  const Sweep sweep = sweep_from(R"(
[axes]
"pipeline.schedule" = ["1f1b", "zb-h1"]
[[zip]]
"model.F" = [1, 2, 3]
"model.B" = [2, 4, 6]
)");
  CHECK(sweep.axes.size() == 2);
  CHECK(sweep.size() == 6);
  CHECK(values_at(sweep, 0) == std::vector<std::string>{"1f1b", "1", "2"});
  CHECK(values_at(sweep, 1) == std::vector<std::string>{"1f1b", "2", "4"});
  CHECK(values_at(sweep, 5) == std::vector<std::string>{"zb-h1", "3", "6"});
  CHECK(sweep.point(4).input.backward_input == std::vector<Rational>{{4, 1}});
}

TEST_CASE("mode zip makes every axis advance together") {
  const Sweep sweep = sweep_from(R"(mode = "zip"
[axes]
"cluster.devices" = [2, 4, 8]
"pipeline.microbatches" = [4, 8, 16]
)");
  CHECK(sweep.size() == 3);
  CHECK(values_at(sweep, 2) == std::vector<std::string>{"8", "16"});
}

TEST_CASE("dotted keys, list values and a sweep with no axis") {
  const Sweep sweep = sweep_from("[axes]\nmodel.F = [[1, 2], [3, 4]]\n");
  CHECK(sweep.parameter_names() == std::vector<std::string>{"model.F"});
  CHECK(values_at(sweep, 1) == std::vector<std::string>{"[ 3, 4 ]"});
  CHECK(sweep.point(1).input.forward == std::vector<Rational>{{3, 1}, {4, 1}});
  // Floats in their shortest round-trip form (TOML's printer would write 0.10000000000000001).
  const Sweep decimals = sweep_from("[axes]\n\"cluster.link.latency\" = [0.1, 2.0, 0.601]\n");
  CHECK(values_at(decimals, 0) == std::vector<std::string>{"0.1"});
  CHECK(values_at(decimals, 1) == std::vector<std::string>{"2"});
  CHECK(values_at(decimals, 2) == std::vector<std::string>{"0.601"});
  const Sweep single = sweep_from("base = \"base.toml\"\n");
  CHECK(single.size() == 1);
  CHECK(single.point(0).values.empty());
}

TEST_CASE("run ids are stable hashes of the parameter values") {
  const std::string text =
      "[axes]\n\"pipeline.microbatches\" = [4, 8]\n\"cluster.devices\" = [2, 4]\n";
  const Sweep sweep = sweep_from(text);
  std::set<std::string> ids;
  for (std::size_t k = 0; k < sweep.size(); ++k) {
    const std::string id = sweep.point(k).id;
    CHECK(id.size() == 16);
    ids.insert(id);
  }
  CHECK(ids.size() == 4);
  // Same parameters, same id, whatever the position: adding a value to an axis keeps old ids.
  const Sweep longer =
      sweep_from("[axes]\n\"pipeline.microbatches\" = [2, 4, 8]\n\"cluster.devices\" = [2, 4]\n");
  CHECK(longer.point(2).id == sweep.point(0).id);
  CHECK(longer.point(5).id == sweep.point(3).id);
  // A fixed value, independent of the machine (FNV-1a of
  // "pipeline.microbatches=4\ncluster.devices=2\n").
  CHECK(sweep.point(0).id == sweep_from(text).point(0).id);
  CHECK(sweep.point(0).id != sweep.point(1).id);
}

TEST_CASE("shards take runs with k mod N == i and cover the run list once") {
  const Shard shard = parse_shard("1/3", "--shard");
  CHECK(shard.shard == 1);
  CHECK(shard.count == 3);
  CHECK(shard.contains(4));
  CHECK_FALSE(shard.contains(3));
  std::vector<int> covered(10, 0);
  for (std::size_t i = 0; i < 3; ++i) {
    const Shard part = parse_shard(std::to_string(i) + "/3", "--shard");
    for (std::size_t k = 0; k < covered.size(); ++k)
      covered[k] += part.contains(k) ? 1 : 0;
  }
  CHECK(covered == std::vector<int>(10, 1));
  for (const char *bad : {"3/3", "1", "a/2", "1/0", "-1/2", "1/2x"}) {
    CAPTURE(bad);
    try {
      (void)parse_shard(bad, "--shard");
      FAIL("accepted");
    } catch (const Error &error) {
      CHECK(std::string(error.what()) ==
            fmt::format("field '--shard': expected i/N with 0 <= i < N, got \"{}\"", bad));
    }
  }
}

TEST_CASE("sweep errors name the file, the line and the field") {
  CHECK(error_of("[axes]\n\"pipeline.microbatch\" = [1]\n") ==
        "sweep.toml:2: unknown field 'pipeline.microbatch', did you mean 'pipeline.microbatches'?");
  CHECK(error_of("[axes]\n\"cluster.devices\" = 4\n") ==
        "sweep.toml:2: field 'cluster.devices': expected a non-empty list of values");
  CHECK(error_of("[axes]\n\"cluster.devices\" = [2, 2]\n") ==
        "sweep.toml:2: field 'cluster.devices': value 2 is listed twice");
  CHECK(error_of("[[zip]]\n\"model.F\" = [1, 2]\n\"model.B\" = [1]\n") ==
        "sweep.toml:3: field 'model.B': has 1 values but 'model.F' has 2: axes that advance "
        "together need "
        "equal lengths");
  CHECK(error_of("mode = \"zip\"\n[axes]\n\"cluster.devices\" = [2, 4]\n\"pipeline.microbatches\" "
                 "= [8]\n") == "sweep.toml:4: field 'pipeline.microbatches': has 1 values but "
                               "'cluster.devices' has 2: axes that "
                               "advance together need equal lengths");
  CHECK(error_of("[axes]\n\"model.F\" = [1]\n[[zip]]\n\"model.F\" = [2]\n") ==
        "sweep.toml:4: field 'model.F': is swept twice");
  CHECK(error_of("mode = \"random\"\n") ==
        "sweep.toml:1: field 'mode': expected \"product\" or \"zip\"");
  CHECK(error_of("basis = \"x\"\n") ==
        "sweep.toml:1: unknown sweep key 'basis' (expected base, mode, axes, zip, output or rank)");
  CHECK(
      error_of("[output]\nmetrics = [\"makespan\", \"makespam\"]\n") ==
      "sweep.toml:2: field 'output.metrics': unknown metric 'makespam', did you mean 'makespan'?");
  CHECK(error_of("[axes\n").rfind("sweep.toml:1: malformed TOML:", 0) == 0);
}

TEST_CASE("a value that does not fit its field marks its point with the sweep line") {
  const Sweep sweep = sweep_from("\n[axes]\n\"cluster.devices\" = [2, -1]\n");
  CHECK(sweep.point(0).input.devices == 2);
  CHECK(sweep.point(0).error.empty());
  CHECK(sweep.point(1).values == std::vector<std::string>{"-1"});
  CHECK(sweep.point(1).error ==
        "sweep.toml:3: field 'cluster.devices': expected an integer >= 1, got -1");
}

TEST_CASE("results files: rows keyed by run, a torn last line dropped, bad rows located") {
  const Results results = parse_results("run,run_id,x\n0,aa,1\n2,bb,\"a,b\"\n3,cc,", "out.csv");
  CHECK(results.header == "run,run_id,x");
  REQUIRE(results.rows.size() == 2);
  CHECK(results.rows[1].run == 2);
  CHECK(results.rows[1].id == "bb");
  CHECK(results.rows[1].line == "2,bb,\"a,b\"");
  CHECK(results.rows[1].line_number == 3);
  const auto error_of_results = [](const std::string &text) {
    try {
      (void)parse_results(text, "out.csv");
    } catch (const Error &error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK(error_of_results("run,run_id,x\n0,aa\n") ==
        "out.csv:2: expected 3 fields starting with a run number, got 2");
  // issue_32: the count was right and the message said "expected 2 fields ..., got 2".
  CHECK(error_of_results("run,run_id\nx,aa\n") ==
        "out.csv:2: field 'run': expected a run number, got \"x\"");
  CHECK(error_of_results(std::string("run,run_id\n0,a\0a\n", 17)) ==
        "out.csv:2: a NUL byte: the file is damaged, not as ppsim wrote it");
  CHECK(error_of_results("a,b\n") ==
        "out.csv:1: not a sweep results file (no 'run' and 'run_id' columns)");
  CHECK(error_of_results("") == "out.csv: empty results file");
}

TEST_CASE("results rows: parameters, identity, metrics and the reason of a failure") {
  const Sweep sweep = sweep_from(R"(base = "base.toml"
[axes]
"pipeline.schedule" = ["gpipe", "1f1b"]
"cluster.K" = [1, 8]
[output]
metrics = ["makespan", "bubble_ratio", "recompute_time"]
)");
  CHECK(sweep_columns(sweep) ==
        std::vector<std::string>{"run", "run_id", "points", "pipeline.schedule", "cluster.K",
                                 "schedule", "p", "m", "v", "remat_policy", "feasible", "makespan",
                                 "bubble_ratio", "recompute_time", "error"});
  const SweepPoint fits = sweep.point(1); // gpipe, K = 8
  const PreparedRun run = prepare_run(fits.input);
  const Simulation simulation = simulate(run.scenario, run.schedule);
  const SimulationReport report{run.scenario, run.schedule, simulation, std::nullopt, {}};
  // gpipe p=2 m=4 F=B=W=1: makespan (m + p - 1) * (F + B + W) = 15, bubble 3/15.
  CHECK(sweep_row(sweep, fits, &report, "") ==
        fmt::format("1,{},4,gpipe,8,gpipe,2,4,1,none,true,15,0.2,0,", fits.id));

  const SweepPoint over = sweep.point(0); // gpipe, K = 1: over the cap
  const PreparedRun over_run = prepare_run(over.input);
  const Simulation over_simulation = simulate(over_run.scenario, over_run.schedule);
  const SimulationReport over_report{
      over_run.scenario, over_run.schedule, over_simulation, std::nullopt, {}};
  CHECK(sweep_row(sweep, over, &over_report, "") ==
        fmt::format(
            "0,{},4,gpipe,1,gpipe,2,4,1,none,false,15,0.2,0,device 0 exceeds the memory cap: 2 > 1",
            over.id));

  CHECK(sweep_row(sweep, sweep.point(2), nullptr, "m < 2p, \"quoted\"") ==
        fmt::format("2,{},4,1f1b,1,1f1b,2,4,,none,false,,,,\"m < 2p, \"\"quoted\"\"\"",
                    sweep.point(2).id));
}

TEST_CASE("results rows carry the sweep's point count when the file has a points column") {
  const Results results = parse_results("run,run_id,points,x\n0,aa,3,1\n2,bb,3,2\n", "out.csv");
  REQUIRE(results.rows.size() == 2);
  CHECK(results.rows[1].points == std::optional<std::size_t>(3));
  CHECK_FALSE(parse_results("run,run_id,x\n0,aa,1\n", "out.csv").rows[0].points);
  std::string error;
  try {
    (void)parse_results("run,run_id,points\n3,aa,3\n", "out.csv");
  } catch (const Error &refused) {
    error = refused.what();
  }
  CHECK(error ==
        "out.csv:2: field 'points': expected the sweep's point count (more than run 3), got \"3\"");
}

TEST_CASE("csv fields round trip through quoting") {
  const std::vector<std::string> fields{"plain", "a,b", "say \"hi\"", "", "[ 1, 2 ]"};
  std::string line = csv_field(fields[0]);
  for (std::size_t i = 1; i < fields.size(); ++i)
    line += "," + csv_field(fields[i]);
  CHECK(line == "plain,\"a,b\",\"say \"\"hi\"\"\",,\"[ 1, 2 ]\"");
  CHECK(split_csv_line(line) == fields);
}

TEST_CASE("issue_27 a sweep with [rank] names at every point the winner compare names") {
  // Equal winners across commands: the row of a ranked point is rank_runs' winner for the
  // point's scenario (what compare, report and remat --auto print), on memory caps where the
  // winner changes with K.
  const Sweep sweep = sweep_from(R"(base = "base.toml"
[axes]
"cluster.K" = [1, 2, 4]
"pipeline.microbatches" = [4, 9]
"model.W" = [0.5, 2]
[rank]
schedules = ["gpipe", "1f1b", "zb-h1", "zb-h2", "1f1b-split"]
[output]
metrics = ["makespan"]
)");
  REQUIRE(sweep.rank.has_value());
  std::set<std::string> winners;
  for (std::size_t k = 0; k < sweep.size(); ++k) {
    const SweepPoint point = sweep.point(k);
    CAPTURE(k);
    RankRequest request = rank_request(point.input, sweep.rank->schedules);
    const Ranking ranking = rank_runs(request, nullptr).front();
    const RankedRun *winner = ranking.winner();
    REQUIRE(winner != nullptr);
    winners.insert(winner->schedule + " + " + winner->policy);
    const SimulationReport report = winner->evaluation->report();
    SweepPoint won = point;
    won.input.schedule = winner->schedule;
    won.input.remat_policy = winner->policy;
    const std::string row = run_sweep_point(sweep, point);
    CHECK(row == sweep_row(sweep, won, &report, ""));
    CHECK(row.find("," + winner->schedule + ",") != std::string::npos);
  }
  // The caps make different schedules and policies win: the rows are not one answer repeated.
  CHECK(winners.size() >= 3);
}

TEST_CASE("issue_27 a ranked point where nothing fits says so in its error column") {
  const Sweep sweep = sweep_from(R"(base = "base.toml"
[axes]
"cluster.K" = [0.5]
[rank]
schedules = ["gpipe", "1f1b"]
policies = ["none"]
[output]
metrics = ["makespan"]
)");
  CHECK(run_sweep_point(sweep, sweep.point(0)) ==
        fmt::format("0,{},1,0.5,,2,4,,,false,,no run fits K = 0.5", sweep.point(0).id));
}

TEST_CASE("issue_27 [rank] errors name the file, the line and the field") {
  CHECK(error_of("base = \"base.toml\"\n[axes]\n\"pipeline.schedule\" = [\"1f1b\"]\n[rank]\n") ==
        "sweep.toml:3: field 'pipeline.schedule': is chosen by [rank] at every point: list the "
        "candidates in rank.schedules or rank.policies instead");
  CHECK(error_of("base = \"base.toml\"\n[axes]\n\"remat.policy\" = [\"full\"]\n[rank]\n") ==
        "sweep.toml:3: field 'remat.policy': is chosen by [rank] at every point: list the "
        "candidates in rank.schedules or rank.policies instead");
  CHECK(error_of("base = \"base.toml\"\n[rank]\nschedules = [\"1f1b\",\n \"zb-hh\"]\n") ==
        "sweep.toml:4: field 'rank.schedules': unknown schedule 'zb-hh', did you mean 'zb-h1'?");
  CHECK(error_of("base = \"base.toml\"\n[rank]\npolicies = [\"fulll\"]\n") ==
        "sweep.toml:3: field 'rank.policies': unknown remat policy 'fulll' (expected none, full, "
        "selective, ilp or file:PATH)");
  CHECK(error_of("base = \"base.toml\"\n[rank]\npolicies = []\n") ==
        "sweep.toml:3: field 'rank.policies': expected a non-empty list of names");
  CHECK(error_of("base = \"base.toml\"\n[rank]\nwinner = 1\n") ==
        "sweep.toml:3: field 'rank': unknown key 'winner' (expected schedules or policies)");
  CHECK(error_of("base = \"base.toml\"\nrank = 1\n") ==
        "sweep.toml:2: field 'rank': expected a table: [rank] schedules = [...], policies = [...]");
}

TEST_CASE("issue_27 the ranked candidates are part of a point's run id") {
  const std::string axes = "base = \"base.toml\"\n[axes]\n\"cluster.K\" = [2]\n";
  const std::string plain = sweep_from(axes).point(0).id;
  const std::string ranked = sweep_from(axes + "[rank]\n").point(0).id;
  const std::string fewer = sweep_from(axes + "[rank]\nschedules = [\"1f1b\"]\n").point(0).id;
  CHECK(plain != ranked);
  CHECK(ranked != fewer);
  // A plan file among the ranked policies is read by the runs: editing it gives new ids.
  const std::string plan =
      (std::filesystem::temp_directory_path() / "ppsim-sweep-rank-plan.csv").string();
  std::ofstream(plan) << "stage,microbatch,fwd,bwd\n";
  const std::string with_plan = axes + "[rank]\npolicies = [\"none\", \"file:" + plan + "\"]\n";
  const std::string before = sweep_from(with_plan).point(0).id;
  std::ofstream(plan) << "stage,microbatch,fwd,bwd\n0,0,full,none\n";
  CHECK(sweep_from(with_plan).point(0).id != before);
  std::filesystem::remove(plan);
}

} // namespace
} // namespace ppsim
