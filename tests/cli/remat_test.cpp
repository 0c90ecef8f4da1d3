// `ppsim remat` in-process: the table of baselines and the optimum, --auto, --lp/--plan files,
// and the one-line errors.
#include "base/decimal.h"
#include "base/text_file.h"
#include "cli/commands.h"
#include "tests/cli/command_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using ppsim::cli::Args;

namespace {

using ppsim::testing::Output;

Output remat(const ppsim::cli::Args &args) {
  return ppsim::testing::run(ppsim::cli::run_remat, args);
}

} // namespace

TEST_CASE("ppsim remat prints the baselines beside the optimum") {
  const Output o = remat(
      {"--schedule", "1f1b",         "-p", "2",   "-m", "4",     "--F", "1",    "--B",
       "1",          "--W",          "0",  "--K", "1",  "--gap", "0",   "--lp", "remat_cli.lp",
       "--plan",     "remat_cli.csv"});
  CHECK(o.code == 0);
  CHECK(o.err.empty());
  std::istringstream lines(o.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);)
    rows.push_back(line);
  REQUIRE(rows.size() == 7);
  CHECK(rows[0] == "schedule 1f1b, p = 2, m = 4, v = 1, cap 1 (count model, early timing)");
  CHECK(rows[2].starts_with("none       over cap"));
  // docs/oracles.md, "Bounds at small caps": full remat at K = 1 has makespan 12 and fits.
  CHECK(rows[3].starts_with("full       fits      "));
  CHECK(rows[3].find(" 12 ") != std::string::npos);
  CHECK(rows[6].starts_with("ilp        optimal   "));
  CHECK(ppsim::read_text_file("remat_cli.lp", "file").find("Tmax") != std::string::npos);
  CHECK(ppsim::read_text_file("remat_cli.csv", "file").starts_with("stage,microbatch,fwd,bwd\n0,"));
  std::remove("remat_cli.lp");
  std::remove("remat_cli.csv");
}

TEST_CASE("ppsim remat --auto ranks the candidates as compare does") {
  // At K = 3 neither schedule fits without recomputation; each row is a schedule's fastest run.
  const Output o = remat(
      {"--auto", "--candidates", "1f1b,zb-h2", "-p", "4", "-m", "8", "--K", "3", "--gap", "0"});
  CHECK(o.code == 0);
  CHECK(o.out.find("\n1    1f1b              ilp       optimal              34         34") !=
        std::string::npos);
  CHECK(o.out.find("\n2    zb-h2             ilp       optimal              40         38") !=
        std::string::npos);
  CHECK(o.out.ends_with("winner: 1f1b + ilp\nranked: each schedule's fastest run with none, full, "
                        "ilp recomputation, by makespan, as `ppsim compare` ranks them "
                        "(--candidates: 2 of its 21 schedules)\n"));
  // issue_18: a line per recomputing run (stderr is no terminal here), then what was written
  // where; -q leaves the table alone.
  CHECK(o.err == "ppsim: remat --auto: 1/4 runs (zb-h2 + full, K = 3)\n"
                 "ppsim: remat --auto: 2/4 runs (1f1b + full, K = 3)\n"
                 "ppsim: remat --auto: 3/4 runs (zb-h2 + ilp, K = 3)\n"
                 "ppsim: remat --auto: 4/4 runs (1f1b + ilp, K = 3)\n"
                 "ppsim: wrote the ranking of 2 schedules to standard output\n");
  // With room for both, no recomputation: zb-h2 wins as it is, and no run needs a policy.
  const Output roomy = remat({"--auto", "--candidates", "1f1b,zb-h2", "-p", "4", "-m", "8", "--K",
                              "8", "--gap", "0", "--quiet"});
  CHECK(roomy.code == 0);
  CHECK(roomy.err.empty());
  CHECK(roomy.out.find("\n1    zb-h2             none      fits                 27") !=
        std::string::npos);
  CHECK(roomy.out.find("winner: zb-h2\n") != std::string::npos);
}

TEST_CASE("issue_29 with the iteration's end the ILP's note says its objective is the iteration") {
  const Output output = remat({"-p", "4", "-m", "8", "--F", "1", "--B", "1", "--W", "1", "--K", "2",
                             "--schedule", "zb-h1", "--set", "iteration.end=sync", "--set",
                             "iteration.optimizer=[3,1,1,1]"});
  CHECK(output.code == 0);
  CHECK(output.out.find("objective 50 (the iteration), bound 50, ") != std::string::npos);
}

TEST_CASE("ppsim remat errors") {
  Output o = remat({"--schedule", "1f1b", "-p", "2", "-m", "2", "--K", "0.5"});
  CHECK(o.code == 1);
  CHECK(o.err == "ppsim: error: cannot fit schedule '1f1b' within cap 0.5; the least peak any "
                 "remat plan reaches is 1\n");
  o = remat({"--schedule", "1f1b", "-p", "2", "-m", "2"});
  CHECK(o.code == 1);
  CHECK(o.err == "ppsim: error: remat needs a memory budget: give --K or --memory\n");
  o = remat({"--auto", "--candidates", "1f1b", "-p", "2", "-m", "2", "--K", "0.5"});
  CHECK(o.code == 1);
  CHECK(o.out.find("-    1f1b              none      over cap") != std::string::npos);
  CHECK(o.err == "ppsim: remat --auto: 1/2 runs (1f1b + full, K = 0.5)\n"
                 "ppsim: remat --auto: 2/2 runs (1f1b + ilp, K = 0.5)\n"
                 "ppsim: error: no schedule and recomputation policy fits the cap\n");
}

TEST_CASE("ppsim remat with a byte budget") {
  // M_f = M_b = 1000 bytes (w_stash = 1), ck = 100, M_ba = 14/32 M_b = 437.5. ZB-H1 defers W, so
  // device 0 holds two W stashes (2000 bytes) without remat. RBW's recompute holds M_f - ck
  // transiently (docs/remat.md, "The ILP (ppsim form)"), so the cheapest plan drops the layer
  // inputs with RW: 1000 + (1000 - 437.5) = 1562.5 bytes.
  const Output o = remat({"--schedule", "zb-h1", "-p", "2", "-m", "4", "--memory-model", "bytes",
                          "--set", "model.memory.act_bytes=1000", "--set",
                          "model.memory.ckpt_bytes=100", "--memory", "1600", "--gap", "0"});
  CHECK(o.code == 0);
  CHECK(o.out.starts_with("schedule zb-h1, p = 2, m = 4, v = 1, budget 1600 bytes (byte model"));
  CHECK(o.out.find("none       over cap          13         13   2000 bytes") != std::string::npos);
  CHECK(o.out.find("ilp        optimal           16         17   1562 bytes    3    4    0") !=
        std::string::npos);
  const Output tight = remat({"--schedule", "zb-h1", "-p", "2", "-m", "4", "--memory-model",
                              "bytes", "--set", "model.memory.act_bytes=1000", "--set",
                              "model.memory.ckpt_bytes=100", "--memory", "1500"});
  CHECK(tight.code == 1);
  CHECK(tight.err ==
        "ppsim: error: cannot fit schedule 'zb-h1' within budget 1500 bytes; the least peak "
        "any remat plan reaches is 1562 bytes\n");
}

namespace {

// The lines of `text` with the solve times (", 1.06 s" in a note, a trailing "0.04" column)
// replaced by "T": everything else of a transcript is deterministic.
std::vector<std::string> without_times(const std::string &text) {
  static const std::regex note_seconds(R"(, \d+\.\d\d s)");
  static const std::regex column_seconds(R"(\s+\d+\.\d\d$)");
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line = std::regex_replace(line, note_seconds, ", T s");
    lines.push_back(std::regex_replace(line, column_seconds, " T"));
  }
  return lines;
}

} // namespace

TEST_CASE("issue_13 docs/remat.md transcripts are what ppsim remat and ppsim checkpoint print") {
  // Every "$ ppsim remat ..." and "$ ppsim checkpoint ..." block of the page is run; its lines
  // (up to a "..." line, then the ones after it at the end) must be the output's.
  const std::string page = ppsim::read_text_file(PPSIM_SOURCE_DIR "/docs/remat.md", "file");
  int blocks = 0;
  for (std::size_t at = page.find("\n$ ppsim "); at != std::string::npos;
       at = page.find("\n$ ppsim ", at + 1)) {
    const std::size_t command_end = page.find('\n', at + 1);
    const std::string command = page.substr(at + 9, command_end - at - 9);
    CAPTURE(command);
    Args args;
    std::istringstream words(command);
    std::string name;
    words >> name;
    for (std::string word; words >> word;)
      args.push_back(word.starts_with("scenarios/") ? PPSIM_SOURCE_DIR "/" + word : word);
    REQUIRE((name == "remat" || name == "checkpoint"));
    std::ostringstream out, err;
    const int code = ppsim::cli::guarded(
        name == "remat" ? ppsim::cli::run_remat : ppsim::cli::run_checkpoint, args, out, err);
    REQUIRE(code == 0);
    const std::vector<std::string> doc = without_times(
        page.substr(command_end + 1, page.find("```", command_end) - command_end - 1));
    const std::vector<std::string> printed = without_times(out.str());
    const auto ellipsis = std::find(doc.begin(), doc.end(), "...");
    const std::vector<std::string> head(doc.begin(), ellipsis);
    REQUIRE(head.size() <= printed.size());
    CHECK(std::equal(head.begin(), head.end(), printed.begin()));
    if (ellipsis != doc.end()) {
      const std::vector<std::string> tail(ellipsis + 1, doc.end());
      REQUIRE(tail.size() <= printed.size());
      CHECK(std::equal(tail.rbegin(), tail.rend(), printed.rbegin()));
    } else {
      CHECK(head.size() == printed.size());
    }
    ++blocks;
  }
  CHECK(blocks == 7);
}

TEST_CASE("issue_31 ppsim checkpoint --format json holds the rows of the text table") {
  // The same stage and front in both forms: every text row is a JSON option, in order, with the
  // same layers and the byte sizes the text rounds.
  for (const Args &args : {Args{"--stages", "8", "--stage", "1", "--levels", "4"},
                           Args{"--stages", "8", "--stage", "1"}, Args{"--stages", "2"},
                           Args{"--stages", "8", "--stage", "1", "--memory", "1.5GiB"}}) {
    Args text_args{PPSIM_SOURCE_DIR "/scenarios/models/llama2-7b.csv"};
    text_args.insert(text_args.end(), args.begin(), args.end());
    Args json_args = text_args;
    json_args.insert(json_args.end(), {"--format", "json"});
    std::ostringstream text, json, err;
    REQUIRE(ppsim::cli::guarded(ppsim::cli::run_checkpoint, text_args, text, err) == 0);
    REQUIRE(ppsim::cli::guarded(ppsim::cli::run_checkpoint, json_args, json, err) == 0);
    const nlohmann::json parsed = nlohmann::json::parse(json.str());
    std::vector<std::string> rows; // the text's option rows: those ending in a layer pattern
    std::istringstream lines(text.str());
    for (std::string line; std::getline(lines, line);) {
      if (!line.starts_with("stage ") && line.find("kept F->B") == std::string::npos)
        rows.push_back(line);
    }
    std::size_t row = 0;
    const bool numbered = args.back() == "4";
    for (const auto &stage : parsed.at("stages")) {
      CHECK(stage.at("store_everything").at("layers").get<std::string>().find_first_not_of('S') ==
            std::string::npos);
      int level = 0;
      for (const auto &option : stage.at("options")) {
        REQUIRE(row < rows.size());
        const std::string &line = rows[row++];
        CHECK(line.ends_with("  " + option.at("layers").get<std::string>()));
        CHECK(line.find(ppsim::format_bytes(option.at("peak_bytes").get<double>())) !=
              std::string::npos);
        CHECK(line.find(ppsim::format_bytes(option.at("kept_bytes").get<double>())) !=
              std::string::npos);
        CHECK(line.find(" " + ppsim::format_readable(option.at("forward_ms").get<double>()) +
                        " ") != std::string::npos);
        CHECK(line.find(" " + ppsim::format_readable(option.at("backward_ms").get<double>()) +
                        " ") != std::string::npos);
        CHECK(option.contains("level") == numbered);
        if (numbered)
          CHECK(option.at("level").get<int>() == ++level);
      }
    }
    CHECK(row == rows.size());
    CHECK(parsed.at("stages").size() == (args.front() == "--stages" && args.size() == 2 ? 2u : 1u));
  }
}

TEST_CASE("issue_31 ppsim remat --format json holds the table's rows") {
  const Args common{"--schedule", "zb-h2", "-p", "4", "-m", "16", "--K", "4", "--gap", "0"};
  Args json_args = common;
  json_args.insert(json_args.end(), {"--format", "json"});
  std::ostringstream text, json, err;
  REQUIRE(ppsim::cli::guarded(ppsim::cli::run_remat, common, text, err) == 0);
  REQUIRE(ppsim::cli::guarded(ppsim::cli::run_remat, json_args, json, err) == 0);
  const nlohmann::json parsed = nlohmann::json::parse(json.str());
  CHECK(parsed.at("schedule") == "zb-h2");
  CHECK(parsed.at("cap") == 4);
  CHECK(parsed.at("memory_model") == "count");
  // The text rows after the two heading lines, policy by policy: the same words and numbers.
  std::istringstream lines(text.str());
  std::string line;
  std::getline(lines, line);
  std::getline(lines, line);
  std::size_t k = 0;
  for (; std::getline(lines, line); ++k) {
    REQUIRE(k < parsed.at("policies").size());
    const auto &policy = parsed.at("policies")[k];
    std::istringstream words(line);
    std::string name, status, second;
    words >> name >> status;
    if (status == "over" || status == "gap")
      words >> second; // "over cap"
    CHECK(name == policy.at("policy").get<std::string>());
    double max_span = 0, makespan = 0, peak = 0;
    int r = 0, rw = 0, rbw = 0;
    words >> max_span >> makespan >> peak >> r >> rw >> rbw;
    CHECK(max_span == doctest::Approx(policy.at("max_span").get<double>()).epsilon(1e-3));
    CHECK(makespan == doctest::Approx(policy.at("makespan").get<double>()).epsilon(1e-3));
    CHECK(peak == policy.at("peak").get<double>());
    CHECK(r == policy.at("R").get<int>());
    CHECK(rw == policy.at("RW").get<int>());
    CHECK(rbw == policy.at("RBW").get<int>());
  }
  CHECK(k == parsed.at("policies").size());
  const auto &ilp = parsed.at("policies").back();
  CHECK(ilp.at("status") == "optimal");
  CHECK(ilp.at("objective").get<double>() == doctest::Approx(71));
  CHECK(ilp.at("bound").get<double>() == doctest::Approx(71));
}

TEST_CASE("issue_31 compare and remat --auto --format json: the rankings, the CSV's runs, one winner") {
  const Args scenario{"-p", "4", "-m", "8", "--K", "3", "--schedules", "1f1b,zb-h1,zb-v", "-q"};
  Args csv_args = scenario, json_args = scenario;
  csv_args.insert(csv_args.end(), {"--format", "csv"});
  json_args.insert(json_args.end(), {"--format", "json"});
  std::ostringstream csv, json, err;
  REQUIRE(ppsim::cli::guarded(ppsim::cli::run_compare, csv_args, csv, err) == 0);
  REQUIRE(ppsim::cli::guarded(ppsim::cli::run_compare, json_args, json, err) == 0);
  const nlohmann::json parsed = nlohmann::json::parse(json.str());
  REQUIRE(parsed.at("rankings").size() == 1);
  const auto &ranking = parsed.at("rankings")[0];
  CHECK(ranking.at("cap") == 3);
  // The CSV's rows (after its header), in order: schedule and policy of every run.
  std::istringstream lines(csv.str());
  std::string line;
  std::getline(lines, line);
  std::size_t k = 0, winners = 0;
  for (; std::getline(lines, line); ++k) {
    REQUIRE(k < ranking.at("runs").size());
    const auto &run = ranking.at("runs")[k];
    CHECK(line.starts_with("3," + run.at("policy").get<std::string>() + "," +
                           run.at("schedule").get<std::string>() + ","));
    CHECK(run.at("report").is_null() == !run.at("unavailable").is_null());
    if (run.at("winner").get<bool>()) {
      ++winners;
      CHECK(ranking.at("winner").at("schedule") == run.at("schedule"));
      CHECK(ranking.at("winner").at("policy") == run.at("policy"));
    }
  }
  CHECK(k == ranking.at("runs").size());
  CHECK(winners == 1);
  // remat --auto ranks the same runs and names the same winner (its table shows each
  // schedule's fastest; the JSON has them all).
  Args auto_args{"--auto", "--candidates", "1f1b,zb-h1,zb-v", "-p", "4", "-m", "8", "--K", "3",
                 "-q"};
  std::ostringstream auto_text, auto_json;
  REQUIRE(ppsim::cli::guarded(ppsim::cli::run_remat, auto_args, auto_text, err) == 0);
  auto_args.insert(auto_args.end(), {"--format", "json"});
  REQUIRE(ppsim::cli::guarded(ppsim::cli::run_remat, auto_args, auto_json, err) == 0);
  const nlohmann::json ranked = nlohmann::json::parse(auto_json.str());
  CHECK(ranked.at("rankings")[0].at("winner") == ranking.at("winner"));
  const std::string winner_line =
      "winner: " + ranking.at("winner").at("schedule").get<std::string>() +
      (ranking.at("winner").at("policy") == "none"
           ? ""
           : " + " + ranking.at("winner").at("policy").get<std::string>());
  CHECK(auto_text.str().find(winner_line + "\n") != std::string::npos);
}

TEST_CASE("issue_31 ppsim schedules --format json lists the registry") {
  std::ostringstream text, json, err;
  REQUIRE(ppsim::cli::guarded(ppsim::cli::run_schedules, {}, text, err) == 0);
  REQUIRE(ppsim::cli::guarded(ppsim::cli::run_schedules, {"--format", "json"}, json, err) == 0);
  const nlohmann::json parsed = nlohmann::json::parse(json.str());
  std::istringstream lines(text.str());
  std::size_t k = 0;
  for (std::string line; std::getline(lines, line) && !line.starts_with("file ");) {
    REQUIRE(k < parsed.at("schedules").size());
    CHECK(line.starts_with(parsed.at("schedules")[k].at("name").get<std::string>() + " "));
    CHECK(line.ends_with(parsed.at("schedules")[k++].at("description").get<std::string>()));
  }
  CHECK(k == parsed.at("schedules").size());
  std::ostringstream out, bad;
  CHECK(ppsim::cli::guarded(ppsim::cli::run_schedules, {"--format", "xml"}, out, bad) == 1);
  CHECK(bad.str() == "ppsim: error: field '--format': expected text or json, got \"xml\"\n");
}

TEST_CASE("issue_13 ppsim checkpoint errors are one line, with nothing printed before them") {
  std::ostringstream out, err;
  const Args tight{PPSIM_SOURCE_DIR "/scenarios/models/llama2-7b.csv", "--stages", "8", "--memory",
                   "1GiB"};
  CHECK(ppsim::cli::guarded(ppsim::cli::run_checkpoint, tight, out, err) == 1);
  CHECK(out.str().empty());
  CHECK(err.str() ==
        "ppsim: error: field '--memory': stage 7 cannot run in 1 GiB: even recomputing everything "
        "needs more\n");
  std::ostringstream out2, err2;
  const Args counts{PPSIM_SOURCE_DIR "/scenarios/models/llama2-7b.csv", "--layers-per-stage",
                    "3,3"};
  CHECK(ppsim::cli::guarded(ppsim::cli::run_checkpoint, counts, out2, err2) == 1);
  CHECK(err2.str() == "ppsim: error: field '--layers-per-stage': the counts add up to 6, not to "
                      "the file's 34 layers\n");
  // issue_32: --stages beside --layers-per-stage was ignored; now both must agree.
  std::ostringstream out3, err3;
  const Args both{PPSIM_SOURCE_DIR "/scenarios/models/gpt-1.5b.csv", "--stages", "3",
                  "--layers-per-stage", "12,12"};
  CHECK(ppsim::cli::guarded(ppsim::cli::run_checkpoint, both, out3, err3) == 1);
  CHECK(err3.str() == "ppsim: error: field '--layers-per-stage': expected 3 counts, got 2\n");
}

TEST_CASE("issue_13 remat on a schedule file takes m from the file and names the file") {
  std::ostringstream out, err;
  REQUIRE(ppsim::cli::guarded(
              ppsim::cli::run_export,
              {"--schedule", "zb-h1", "-p", "4", "-m", "16", "-o", "remat_file_m16.csv"}, out,
              err) == 0);
  const Output o =
      remat({"--schedule-file", "remat_file_m16.csv", "--K", "3", "--time-limit", "20", "--gap", "0"});
  CHECK(o.code == 0);
  CHECK(o.out.starts_with("schedule file:remat_file_m16.csv, p = 4, m = 16, v = 1, cap 3 (count "
                          "model, early timing)\n"));
  CHECK(o.out.find("\nilp        optimal ") != std::string::npos);
  std::remove("remat_file_m16.csv");
}

TEST_CASE("issue_17 remat with an unwritable --plan prints nothing before its one error line") {
  const Output o = remat({"--schedule", "1f1b", "-p", "2", "-m", "2", "--K", "1.5", "--plan",
                          "/nonexistent-dir/plan.csv"});
  CHECK(o.code == 1);
  CHECK(o.out.empty());
  CHECK(o.err.starts_with(
      "ppsim: error: /nonexistent-dir/plan.csv: field '--plan': cannot write the file"));
}

TEST_CASE("issue_13 ppsim checkpoint on a cost file without activation sizes is one line") {
  {
    std::ofstream file("checkpoint_no_bytes.csv");
    file << "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n1,0,1,1,1\n1,1,1,1,1\n";
  }
  std::ostringstream out, err;
  CHECK(ppsim::cli::guarded(ppsim::cli::run_checkpoint, {"checkpoint_no_bytes.csv"}, out, err) ==
        1);
  CHECK(out.str().empty());
  CHECK(err.str() ==
        "ppsim: error: checkpoint_no_bytes.csv: stage 0 has no activation sizes (input_bytes, "
        "activation_bytes_full): nothing to checkpoint\n");
  std::remove("checkpoint_no_bytes.csv");
}
