// Chrome trace writer: parsed back with nlohmann-json and checked against the simulation.
#include "base/index.h"
#include "sim/io/trace.h"

#include "../test_support.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

using namespace ppsim;
using nlohmann::json;
using ppsim::testing::run_schedule;
using ppsim::testing::uniform_input;

namespace {

json parse_trace(const testing::Run &run) {
  return json::parse(chrome_trace_json(run.scenario, run.schedule, run.simulation));
}

std::vector<json> events(const json &trace, const std::string &phase, int tid = -1) {
  std::vector<json> selected;
  for (const json &event : trace.at("traceEvents")) {
    if (event.at("ph") == phase && (tid < 0 || event.at("tid") == tid))
      selected.push_back(event);
  }
  return selected;
}

// Name of each (pid, tid) track from the thread_name metadata.
std::map<std::pair<int, int>, std::string> thread_names(const json &trace) {
  std::map<std::pair<int, int>, std::string> names;
  for (const json &event : events(trace, "M")) {
    if (event.at("name") == "thread_name") {
      names[{event.at("pid").get<int>(), event.at("tid").get<int>()}] = event.at("args").at("name");
    }
  }
  return names;
}

} // namespace

TEST_CASE("trace: one X event per op on the compute track with times in microseconds") {
  const auto run = run_schedule("1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  const json trace = parse_trace(run);
  const std::vector<json> ops = events(trace, "X", 0);
  REQUIRE(ops.size() == run.schedule.op_count());
  // Device 0 of 1F1B starts with F(0,0) at 0 for one unit (1 ms = 1000 us).
  CHECK(ops.front().at("name") == "F(0,0)");
  CHECK(ops.front().at("ts") == 0);
  CHECK(ops.front().at("dur") == 1000);
  std::size_t entry = 0;
  for (int g = 0; g < run.schedule.device_count(); ++g) {
    for (const Op &op : run.schedule.device_ops[ppsim::at(g)]) {
      CAPTURE(entry);
      const json &event = ops[entry];
      CHECK(event.at("pid") == g + 1); // process ids from 1, as Perfetto expects
      CHECK(event.at("name") == describe(op));
      CHECK(event.at("ts") == 1000 * run.units(run.simulation.timing.start[entry]));
      CHECK(event.at("dur") == 1000 * run.units(run.simulation.timing.end[entry] -
                                                run.simulation.timing.start[entry]));
      CHECK(event.at("args").at("kind") == op_kind_token(op.kind()));
      CHECK(event.at("args").at("stage") == op.first.stage);
      CHECK(event.at("args").at("microbatch") == op.first.microbatch);
      ++entry;
    }
  }
  // The last BW of device 0 ends at the makespan, 33 units.
  const json &last = ops[run.schedule.device_ops[0].size() - 1];
  CHECK(last.at("name") == "BW(0,7)");
  CHECK(last.at("ts").get<double>() + last.at("dur").get<double>() == 33000);
}

TEST_CASE("trace: times follow the scenario's time unit") {
  const auto run = run_schedule("1f1b", uniform_input(2, 2, {1, 1}, {3, 2}, {0, 1}));
  const auto last_end = [&](std::string_view unit) {
    const json trace =
        json::parse(chrome_trace_json(run.scenario, run.schedule, run.simulation, unit));
    double end = 0;
    for (const json &op : events(trace, "X", 0)) {
      end = std::max(end, op.at("ts").get<double>() + op.at("dur").get<double>());
    }
    return end;
  };
  // Makespan (m + p - 1)(F + B) = 3 * 2.5 = 7.5 units.
  CHECK(last_end("ms") == 7500);
  CHECK(last_end("s") == 7500000);
  CHECK(last_end("us") == 7.5);
}

TEST_CASE("trace: one process per device with named compute tracks") {
  const auto run = run_schedule("gpipe", uniform_input(3, 2, {1, 1}, {2, 1}, {0, 1}));
  const json trace = parse_trace(run);
  std::map<int, std::string> processes;
  for (const json &event : events(trace, "M")) {
    if (event.at("name") == "process_name")
      processes[event.at("pid")] = event.at("args").at("name");
  }
  CHECK(processes == std::map<int, std::string>{{1, "device 0"}, {2, "device 1"}, {3, "device 2"}});
  const auto names = thread_names(trace);
  for (int g = 0; g < 3; ++g)
    CHECK(names.at({g + 1, 0}) == "compute");
  // Without latency transfers are instantaneous: no send tracks, only compute.
  CHECK(!run.simulation.timing.transfers.empty());
  CHECK(names.size() == 3);
  CHECK(events(trace, "X").size() == run.schedule.op_count());
  std::set<int> pids;
  for (const json &event : events(trace, "X"))
    pids.insert(event.at("pid").get<int>());
  CHECK(pids == std::set<int>{1, 2, 3});
  CHECK(trace.at("otherData").at("schedule") == "gpipe");
  CHECK(trace.at("otherData").at("makespan_us") ==
        1000 * run.units(run.simulation.metrics.makespan));
}

TEST_CASE("trace: memory counters follow the ops (resident = forwards started - backwards ended)") {
  const auto run = run_schedule("1f1b", uniform_input(4, 8, {1, 1}, {2, 1}, {0, 1}));
  const json trace = parse_trace(run);
  const std::vector<json> ops = events(trace, "X", 0);
  const std::vector<json> counters = events(trace, "C");
  REQUIRE(!counters.empty());
  for (int g = 0; g < 4; ++g) {
    CAPTURE(g);
    std::vector<std::pair<double, double>> steps; // (ts, activations)
    for (const json &counter : counters) {
      if (counter.at("pid") != g + 1)
        continue;
      CHECK(counter.at("name") == "memory"); // one track, a series per quantity
      if (!steps.empty())
        CHECK(counter.at("ts").get<double>() > steps.back().first);
      steps.emplace_back(counter.at("ts"), counter.at("args").at("activations"));
    }
    REQUIRE(!steps.empty());
    CHECK(steps.front().first == 0);
    double peak = 0;
    for (const auto &[ts, value] : steps) {
      // Count model, single wave: each F holds one unit from its start to its BW's end.
      double expected = 0;
      for (const json &op : ops) {
        if (op.at("pid") != g + 1)
          continue;
        const double start = op.at("ts");
        const double end = start + op.at("dur").get<double>();
        if (op.at("args").at("kind") == "F" && start <= ts)
          expected += 1;
        if (op.at("args").at("kind") == "BW" && end <= ts)
          expected -= 1;
      }
      CAPTURE(ts);
      CHECK(value == expected);
      peak = std::max(peak, value);
    }
    CHECK(peak == run.simulation.metrics.devices[ppsim::at(g)].peak_activations);
    CHECK(steps.back().second == 0);
  }
}

TEST_CASE("trace: a bytes series joins the memory counter when the byte model is tracked") {
  auto input = uniform_input(2, 2, {1, 1}, {1, 1}, {0, 1});
  input.bytes.activation = {1000};
  input.bytes.parameters = {50};
  const auto run = run_schedule("1f1b", input);
  const json trace = parse_trace(run);
  std::vector<double> device0;
  for (const json &counter : events(trace, "C")) {
    if (counter.at("pid") == 1) {
      CHECK(counter.at("name") == "memory");
      CHECK(counter.at("args").contains("activations"));
      device0.push_back(counter.at("args").at("bytes"));
    }
  }
  // 2 x 50 parameter bytes always, plus 1000 per live activation: F(0,0), F(0,1), then releases.
  CHECK(device0 == std::vector<double>{1100, 2100, 1100, 100});
}

TEST_CASE("issue_18 trace: otherData carries the cap of each capped memory series") {
  auto input = uniform_input(2, 4, {1, 1}, {1, 1}, {0, 1});
  CHECK_FALSE(parse_trace(run_schedule("1f1b", input)).at("otherData").contains("memory_caps"));
  input.cap_activations = 3;
  CHECK(parse_trace(run_schedule("1f1b", input)).at("otherData").at("memory_caps") ==
        json{{"activations", 3}});
  input.bytes.activation = {1000};
  input.memory_model = MemoryModel::bytes;
  input.budget_bytes = 85899345920.0;
  const json caps = parse_trace(run_schedule("1f1b", input)).at("otherData").at("memory_caps");
  CHECK(caps.at("bytes") == 85899345920.0);
  CHECK(caps.at("activations") == 3);
  CHECK(caps.size() == 2);
}

TEST_CASE("trace: transfers are X events on the sender's send tracks, never overlapping") {
  // Latency 3 > F = 1: device 0's forwards leave every unit and are 3 units in flight, so the
  // sends overlap and need three lanes.
  const auto run = run_schedule("gpipe", uniform_input(2, 4, {1, 1}, {1, 1}, {0, 1}, {3, 1}));
  const json trace = parse_trace(run);
  std::vector<json> sends;
  for (const json &event : events(trace, "X")) {
    if (event.at("tid") != 0)
      sends.push_back(event);
  }
  REQUIRE(sends.size() == run.simulation.timing.transfers.size());
  REQUIRE(sends.size() == 8); // 4 forwards 0 -> 1 and 4 gradients 1 -> 0
  const json *first = nullptr;
  for (const json &send : sends) {
    if (send.at("name") == "F(0,0) -> device 1")
      first = &send;
  }
  REQUIRE(first != nullptr);
  CHECK(first->at("pid") == 1);
  CHECK(first->at("ts") == 1000);
  CHECK(first->at("dur") == 3000);
  CHECK(first->at("args").at("consumer") == "F(1,0)");
  CHECK(first->at("args").at("to") == 1);
  std::map<std::pair<int, int>, double> lane_end;
  for (const json &send : sends) {
    const std::pair<int, int> track{send.at("pid"), send.at("tid")};
    const double start = send.at("ts");
    if (lane_end.contains(track))
      CHECK(start >= lane_end[track]);
    lane_end[track] = start + send.at("dur").get<double>();
  }
  const auto names = thread_names(trace);
  CHECK(names.at({1, 1}) == "send"); // device 0 is process 1
  CHECK(names.at({1, 2}) == "send 2");
  CHECK(names.at({1, 3}) == "send 3");
  CHECK(!names.contains({1, 4}));
  CHECK(names.at({2, 1}) == "send");
}

TEST_CASE("trace: overlapped ops name their backward, schedule names are escaped") {
  auto run = run_schedule("dualpipe", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  run.schedule.name = "my \"odd\"\\name\n";
  const json trace = parse_trace(run);
  CHECK(trace.at("otherData").at("schedule") == run.schedule.name);
  int overlapped = 0;
  for (const json &event : events(trace, "X", 0)) {
    if (event.at("args").at("kind") != "OV")
      continue;
    ++overlapped;
    const std::string name = event.at("name");
    const std::string backward = event.at("args").at("backward");
    CHECK(name.ends_with(";" + backward + ")"));
  }
  CHECK(overlapped > 0);
}

TEST_CASE(
    "issue_16 trace times are whole nanoseconds: adjacent slices never overlap after conversion") {
  // F = 1/3 ms: in microseconds 333.333..., which a reader converting to nanoseconds could round
  // so that one slice's end passes the next one's start. ppsim writes whole nanoseconds.
  const auto run = run_schedule("1f1b", uniform_input(3, 6, {1, 3}, {2, 3}, {0, 1}));
  const json trace = parse_trace(run);
  for (int g = 1; g <= 3; ++g) {
    CAPTURE(g);
    std::int64_t previous_end = -1;
    for (const json &op : events(trace, "X", 0)) {
      if (op.at("pid") != g)
        continue;
      const auto ns = [](const json &value) {
        return static_cast<std::int64_t>(std::llround(value.get<double>() * 1000));
      };
      const std::int64_t start = ns(op.at("ts"));
      CHECK(static_cast<double>(start) ==
            doctest::Approx(op.at("ts").get<double>() * 1000).epsilon(1e-12));
      CHECK(start >= previous_end);
      previous_end = start + ns(op.at("dur"));
    }
  }
}
