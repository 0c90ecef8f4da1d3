// Timeline JSON of the interactive report: parsed back with nlohmann-json and checked against
// the simulation it describes.
#include "sim/io/timeline_json.h"

#include "../test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace ppsim;
using nlohmann::json;
using ppsim::testing::run_schedule;
using ppsim::testing::uniform_input;

namespace {

json timeline_of(const testing::Run &run) {
  const BubbleExplanation explanation =
      explain_bubbles(run.scenario, run.schedule, run.simulation.timing);
  return json::parse(timeline_json(run.scenario, run.schedule, run.simulation, explanation));
}

} // namespace

TEST_CASE("every op appears once, device by device, with its times and what it waited for") {
  // GPipe p=2 m=1 with latency 1: F(0,0) [0,1], F(1,0) [2,3], BW(1,0) [3,5], BW(0,0) [6,8].
  const auto run = run_schedule("gpipe", uniform_input(2, 1, {1, 1}, {1, 1}, {1, 1}, {1, 1}));
  const json timeline = timeline_of(run);
  CHECK(timeline.at("devices") == 2);
  CHECK(timeline.at("kinds") == json({"F", "B", "W", "BW", "R", "RW", "RBW", "OV"}));
  CHECK(timeline.at("device_offsets") == json({0, 2, 4}));
  CHECK(timeline.at("kind") == json({0, 3, 0, 3}));
  CHECK(timeline.at("stage") == json({0, 0, 1, 1}));
  CHECK(timeline.at("microbatch") == json({0, 0, 0, 0}));
  CHECK(timeline.at("start") == json({0, 6, 2, 3}));
  CHECK(timeline.at("end") == json({1, 8, 3, 5}));
  CHECK(timeline.at("waited_for") == json({-1, 3, 0, 2}));
  CHECK(timeline.at("critical_path") == json({0, 2, 3, 1}));
  CHECK(timeline.at("overlapped").empty());
}

TEST_CASE("memory curves are the steps of each device's timeline, with the cap") {
  // 1F1B p=2 m=3 under K = 2: device 0 holds at most 2 activations, device 1 at most 1.
  ScenarioInput input = uniform_input(2, 3, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 2;
  const auto run = run_schedule("1f1b", input);
  const json memory = timeline_of(run).at("memory");
  CHECK(memory.at("unit") == "activations");
  CHECK(memory.at("cap") == 2);
  REQUIRE(memory.at("devices").size() == 2);
  for (std::size_t g = 0; g < 2; ++g) {
    const json &device = memory.at("devices").at(g);
    const std::vector<MemoryPoint> &timeline = run.simulation.activations.devices[g].timeline;
    REQUIRE_FALSE(timeline.empty());
    CHECK(device.at("time").size() == device.at("resident").size());
    CHECK(device.at("time").front() == run.units(timeline.front().time));
    CHECK(device.at("resident").back() == 0);
    CHECK(device.at("peak") == run.simulation.activations.devices[g].peak);
  }
  CHECK(memory.at("devices").at(0).at("peak") == 2);
  CHECK(memory.at("devices").at(1).at("peak") == 1);
}

TEST_CASE("byte-model runs draw the byte curve against the budget") {
  ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
  testing::set_accounting_bytes(input, 1e6);
  const auto run = run_schedule("zb-h1", input);
  const json memory = timeline_of(run).at("memory");
  CHECK(memory.at("unit") == "bytes");
  CHECK(memory.at("cap") == 1e6);
  CHECK(memory.at("devices").at(0).at("peak") == run.simulation.bytes->devices[0].peak);
}

TEST_CASE("overlapped ops of DualPipe carry the description of both sub-ops") {
  const auto run = run_schedule("dualpipe", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  const json timeline = timeline_of(run);
  REQUIRE_FALSE(timeline.at("overlapped").empty());
  const auto first = timeline.at("overlapped").items().begin();
  CHECK(timeline.at("kind").at(std::stoul(first.key())) == 7);
  CHECK(first.value().get<std::string>().rfind("OV(F(", 0) == 0);
}
