// Text, JSON and CSV reports (docs/model.md, "Command line and JSON") on the O-1 oracle.
#include "base/decimal.h"
#include "sim/io/report.h"

#include "../test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace ppsim;

TEST_CASE("json has the keys of docs/model.md, 'Command line and JSON' with the oracle values") {
  const auto run =
      testing::run_schedule("1f1b", testing::uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  const SimulationReport report{
      run.scenario, run.schedule, run.simulation, Ticks{27}, {"a \"quoted\" warning"}};
  const nlohmann::json json = nlohmann::json::parse(report_json(report));
  CHECK(json["schedule"] == "1f1b");
  CHECK(json["p"] == 4);
  CHECK(json["m"] == 8);
  CHECK(json["v"] == 1);
  CHECK(json["feasible"] == true);
  CHECK(json["makespan"] == 33);
  CHECK(json["max_span"] == 33);
  CHECK(json["bubble_ratio"].get<double>() == doctest::Approx(9.0 / 33));
  CHECK(json["span_bubble_ratio"].get<double>() == doctest::Approx(9.0 / 33));
  CHECK(json["best_lower_bound"] == 27);
  CHECK(json["gap"].get<double>() == doctest::Approx(33.0 / 27 - 1));
  REQUIRE(json["devices"].size() == 4);
  CHECK(json["devices"][3]["start"] == 3);
  CHECK(json["devices"][3]["end"] == 27);
  CHECK(json["devices"][0]["idle"] == 9);
  CHECK(json["devices"][0]["peak_activations"] == 4);
  CHECK(json["devices"][0]["peak_bytes"].is_null());
  CHECK(json["violations"].empty());
  CHECK(json["warnings"][0] == "a \"quoted\" warning");
}

TEST_CASE("violations are reported with the op that first exceeds the cap") {
  ScenarioInput input = testing::uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 2;
  const auto run = testing::run_schedule("1f1b", input);
  const SimulationReport report{run.scenario, run.schedule, run.simulation, std::nullopt, {}};
  const nlohmann::json json = nlohmann::json::parse(report_json(report));
  CHECK(json["feasible"] == false);
  // Devices 0 and 1 hold 4 and 3 activations: their third forward is the first over K = 2.
  REQUIRE(json["violations"].size() == 2);
  CHECK(json["violations"][0]["device"] == 0);
  CHECK(json["violations"][0]["op"] == "F(0,2)");
  CHECK(json["violations"][0]["time"] == 2);
  CHECK(json["violations"][0]["resident"] == 3);
  CHECK(json["violations"][1]["op"] == "F(1,2)");
  CHECK(report_text(report).find("over the cap: device 0 at F(0,2) (2): 3 > 2\n") !=
        std::string::npos);
}

TEST_CASE("csv has a stable header and one row") {
  const auto run =
      testing::run_schedule("gpipe", testing::uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}, {1, 2}));
  const SimulationReport report{run.scenario, run.schedule, run.simulation, std::nullopt, {}};
  CHECK(report_csv_header() ==
        "schedule,p,m,v,feasible,makespan,max_span,ideal,bubble_ratio,span_bubble_ratio,"
        "peak_activations,peak_bytes,best_lower_bound,gap");
  CHECK(report_csv_row(report).rfind(
            "gpipe,4,8,1,true,36,36,24,0.3333333333333333,0.3333333333333333,8,,,", 0) == 0);
}

TEST_CASE("text reports round to 4 significant digits without exponents, bytes in their unit") {
  CHECK(ppsim::format_readable(26.15) == "26.15");
  CHECK(ppsim::format_readable(33.8) == "33.8");
  CHECK(ppsim::format_readable(1553.793682) == "1554");
  CHECK(ppsim::format_readable(123456789.4) == "123456789");
  CHECK(ppsim::format_readable(48.4324324) == "48.43");
  CHECK(ppsim::format_readable(0.05) == "0.05");
  CHECK(ppsim::format_readable(0.000123456) == "0.0001235");
  CHECK(ppsim::format_readable(0) == "0");
  CHECK(ppsim::format_readable(-0.00001) == "-0.00001");
  CHECK(ppsim::format_bytes(85899345920.0) == "80 GiB");
  CHECK(ppsim::format_bytes(1.5 * 1024 * 1024 * 1024) == "1.5 GiB");
  CHECK(ppsim::format_bytes(48.0 * 1024 * 1024) == "48 MiB");
  CHECK(ppsim::format_bytes(1562) == "1562 bytes");
}
