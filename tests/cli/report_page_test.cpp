// The interactive report: the run data embedded in the page (escaped, parsed back whole), the
// page self-contained, and `ppsim report` / `compare --report` end to end in-process, errors
// included. The page's behaviour in a browser is tests/cli/report_browser_test.py.
#include "run/report_page.h"
#include "tests/cli/command_support.h"

#include "cli/commands.h"
#include "run/prepare.h"
#include "sim/critical_path.h"
#include "sim/io/timeline_json.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

using namespace ppsim;
using namespace ppsim::cli;
using nlohmann::json;

namespace {

using ppsim::testing::Output;
using ppsim::testing::run;

std::string read(const std::string &path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

bool exists(const std::string &path) { return std::ifstream(path).good(); }

// The text of the page's data element.
std::string embedded(const std::string &page) {
  const std::string open = "<script type=\"application/json\" id=\"ppsim-data\">";
  const std::size_t begin = page.find(open);
  REQUIRE(begin != std::string::npos);
  const std::size_t end = page.find("</script>", begin);
  REQUIRE(end != std::string::npos);
  return page.substr(begin + open.size(), end - begin - open.size());
}

const Args kQuickstart{PPSIM_SOURCE_DIR "/scenarios/quickstart.toml", "--schedules",
                       "1f1b,zb-h1,dualpipev", "-q"};

} // namespace

TEST_CASE("the data is embedded whole and no text in it can close its script element") {
  const std::string data = R"({"model": "</script><script>alert(1)</script><!-- x", "p": 2})";
  const std::string page = report_page(data);
  const std::string text = embedded(page);
  CHECK(text.find('<') == std::string::npos);
  CHECK(json::parse(text) == json::parse(data));
  // The only script elements are the page's own two.
  CHECK(std::count(page.begin(), page.end(), '<') > 0);
  std::size_t closes = 0;
  for (std::size_t at = page.find("</script>"); at != std::string::npos;
       at = page.find("</script>", at + 1))
    ++closes;
  CHECK(closes == 2);
}

TEST_CASE("the page is self-contained: no address to fetch, every script and style inline") {
  const std::string page = report_page("{}");
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
  CHECK(page.find("//cdn") == std::string::npos);
  CHECK_FALSE(std::regex_search(page, std::regex(R"(<script[^>]*\ssrc=)")));
  CHECK_FALSE(std::regex_search(page, std::regex(R"(<link[^>]*href="(?!data:))")));
  CHECK_FALSE(std::regex_search(page, std::regex(R"(@import|url\()")));
  // The script and the style were inlined at build time, not left as placeholders.
  CHECK(page.find("@PPSIM_REPORT_") == std::string::npos);
  CHECK(page.find("window.ppsimReport") != std::string::npos);
  CHECK(page.find("#chart") != std::string::npos);
}

TEST_CASE("a run's data holds its JSON summary and timeline, the numbers of the JSON writers") {
  RunInput input;
  input.devices = 2;
  input.microbatches = 3;
  input.schedule = "1f1b";
  input.cap_activations = 2;
  const PreparedRun prepared = prepare_run(input);
  const Simulation simulation = simulate(prepared.scenario, prepared.schedule, {true});
  const SimulationReport report{prepared.scenario, prepared.schedule, simulation, Ticks{7}, {}};
  const json row = json::parse(report_run_json(report, "none"));
  CHECK(row.at("schedule") == "1f1b");
  CHECK(row.at("policy") == "none");
  CHECK(row.at("peak") == 2);
  CHECK(row.at("summary") == json::parse(report_json(report)));
  const BubbleExplanation explanation =
      explain_bubbles(prepared.scenario, prepared.schedule, simulation.timing);
  CHECK(row.at("timeline") ==
        json::parse(timeline_json(prepared.scenario, prepared.schedule, simulation, explanation)));

  const json unavailable = json::parse(report_unavailable_json("dualpipev", "none", "needs m"));
  CHECK(unavailable ==
        json{{"schedule", "dualpipev"}, {"policy", "none"}, {"unavailable", "needs m"}});
  const json data = json::parse(
      report_data_json(ReportHeader{"compare", "toy", 2, 3, "ms"},
                       {ReportTable{"memory cap K = 2", {row.dump(), unavailable.dump()}}}));
  CHECK(data.at("command") == "compare");
  CHECK(data.at("model") == "toy");
  CHECK(data.at("time_unit") == "ms");
  REQUIRE(data.at("tables").size() == 1);
  CHECK(data.at("tables")[0].at("heading") == "memory cap K = 2");
  CHECK(data.at("tables")[0].at("rows") == json{row, unavailable});
}

TEST_CASE("ppsim report writes compare's ranking, row for row, into the page") {
  std::remove("report_cli.html");
  const Output o = run(run_report, [] {
    Args args = kQuickstart;
    args.insert(args.end(), {"-o", "report_cli.html"});
    return args;
  }());
  CHECK(o.code == 0);
  CHECK(o.err.empty());
  CHECK(o.out.ends_with("interactive report written to report_cli.html\n"));
  const json data = json::parse(embedded(read("report_cli.html")));
  CHECK(data.at("p") == 4);
  CHECK(data.at("m") == 8);
  const json &rows = data.at("tables")[0].at("rows");
  // The text table lists the same rows in the same order.
  std::vector<std::string> names;
  for (const json &row : rows)
    names.push_back(row.at("schedule").get<std::string>());
  std::size_t last = 0;
  for (const std::string &name : names) {
    const std::size_t at = o.out.find("\n" + name + " ", last);
    CHECK_MESSAGE(at != std::string::npos, name);
    last = at == std::string::npos ? last : at;
  }
  CHECK(names.size() == 3);
  for (const json &row : rows) {
    if (row.contains("unavailable"))
      continue;
    // The timeline ends at the makespan of the summary.
    const json &ends = row.at("timeline").at("end");
    REQUIRE_FALSE(ends.empty());
    CHECK(*std::max_element(ends.begin(), ends.end()) == row.at("summary").at("makespan"));
  }
  std::remove("report_cli.html");
}

TEST_CASE("compare --report writes the same page as ppsim report") {
  Args args = kQuickstart;
  args.insert(args.end(), {"--report", "compare_report.html"});
  const Output compared = run(run_compare, args);
  CHECK(compared.code == 0);
  Args report_args = kQuickstart;
  report_args.insert(report_args.end(), {"--output=report_same.html"});
  CHECK(run(run_report, report_args).code == 0);
  CHECK(read("compare_report.html") == read("report_same.html"));
  std::remove("compare_report.html");
  std::remove("report_same.html");
}

TEST_CASE("ppsim report errors: one line, nothing written") {
  Output o = run(run_report, kQuickstart);
  CHECK(o.code == 1);
  CHECK(o.err == "ppsim: error: field '-o': expected the file to write the report to (ppsim "
                 "report SCENARIO -o report.html)\n");
  o = run(run_report, {PPSIM_SOURCE_DIR "/scenarios/quickstart.toml", "-o"});
  CHECK(o.code == 1);
  CHECK(o.err == "ppsim: error: field '-o': expected the file to write the report to\n");
  o = run(run_report,
          {PPSIM_SOURCE_DIR "/scenarios/quickstart.toml", "-o", "no-such-folder/r.html"});
  CHECK(o.code == 1);
  CHECK(o.err.starts_with("ppsim: error: "));
  CHECK(o.err.find("--report") != std::string::npos);
  CHECK(o.out.empty());
  CHECK_FALSE(exists("no-such-folder/r.html"));
  // The report must not replace the scenario it reads.
  o = run(run_report, {PPSIM_SOURCE_DIR "/scenarios/quickstart.toml", "-o",
                       PPSIM_SOURCE_DIR "/scenarios/quickstart.toml"});
  CHECK(o.code == 1);
  CHECK(o.err.find("--report") != std::string::npos);
  CHECK(read(PPSIM_SOURCE_DIR "/scenarios/quickstart.toml").find("[cluster]") != std::string::npos);
  o = run(run_report, {"--help"});
  CHECK(o.code == 0);
  CHECK(o.out.starts_with("ppsim report [SCENARIO.toml] -o FILE [options of ppsim compare]\n"));
  CHECK(o.out.find("--report") != std::string::npos);
}

TEST_CASE("remat --report: the policies in the order printed; with --auto, the ranking") {
  std::remove("remat_report.html");
  const std::string quickstart = PPSIM_SOURCE_DIR "/scenarios/quickstart.toml";
  Output o = run(run_remat, {quickstart, "--schedule", "zb-h1", "--report", "remat_report.html"});
  REQUIRE(o.code == 0);
  CHECK(o.out.ends_with("interactive report written to remat_report.html\n"));
  json data = json::parse(embedded(read("remat_report.html")));
  CHECK(data.at("command") == "remat");
  REQUIRE(data.at("tables").size() == 1);
  CHECK(data.at("tables")[0].at("heading") == "cap 4");
  std::vector<std::string> policies;
  for (const json &row : data.at("tables")[0].at("rows")) {
    policies.push_back(row.at("policy").get<std::string>());
    CHECK(row.at("schedule") == "zb-h1");
    // Each row's summary is the replay of its plan, with its memory curves.
    const json &ends = row.at("timeline").at("end");
    CHECK(*std::max_element(ends.begin(), ends.end()) == row.at("summary").at("makespan"));
  }
  CHECK(policies == std::vector<std::string>{"none", "full", "selective", "greedy", "ilp"});

  o = run(run_remat, {quickstart, "--auto", "--candidates", "zb-h1,1f1b,zb-v", "--report",
                      "remat_report.html"});
  REQUIRE(o.code == 0);
  data = json::parse(embedded(read("remat_report.html")));
  std::vector<std::string> ranked;
  for (const json &row : data.at("tables")[0].at("rows"))
    ranked.push_back(row.at("schedule").get<std::string>());
  CHECK(ranked == std::vector<std::string>{"zb-v", "zb-h1", "1f1b"});
  CHECK(o.out.find("winner: zb-v\n") != std::string::npos);

  // --auto ranks the runs compare ranks; the elf form only cross-checks one schedule's plan.
  o = run(run_remat, {quickstart, "--auto", "--candidates", "zb-h1", "--ilp-form", "elf",
                      "--report", "remat_report.html"});
  CHECK(o.code == 1);
  CHECK(o.err == "ppsim: error: field '--ilp-form': elf solves one schedule for cross-checking; "
                 "--auto ranks with the ppsim form\n");
  // The page may not replace the scenario it reads, with or without --auto.
  for (const bool automatic : {false, true}) {
    Args args{quickstart, "--report", quickstart};
    if (automatic)
      args.push_back("--auto");
    o = run(run_remat, args);
    CHECK(o.code == 1);
    CHECK(o.err.find("--report") != std::string::npos);
  }
  std::remove("remat_report.html");
}
