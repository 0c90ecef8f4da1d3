// sim/schedules/registry: name lookup with did-you-mean, and every entry's facts consistent
// with its placement and with what its generator emits.
#include "sim/schedules/registry.h"

#include "base/error.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

using ppsim::Error;
using ppsim::find_schedule;
using ppsim::lookup_schedule;
using ppsim::PlacementKind;
using ppsim::schedule_registry;
using ppsim::ScheduleInfo;

TEST_CASE("the registry lists every schedule once, in listing order") {
  std::vector<std::string> names;
  for (const ScheduleInfo &info : schedule_registry())
    names.push_back(info.name);
  CHECK(names ==
        std::vector<std::string>{"gpipe",      "1f1b",           "1f1b-split", "interleaved-1f1b",
                                 "looped-bfs", "interleaved-zb", "hanayo",     "zb-h1",
                                 "zb-h2",      "zb-1p",          "zb-2p",      "zb-auto",
                                 "zb-v",       "zb-v-greedy",    "v-min",      "v-half",
                                 "v-auto",     "dualpipe",       "dualpipev",  "allremat-1f1b",
                                 "full-remat"});
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
}

TEST_CASE("find_schedule returns the entry, or suggests the closest name") {
  CHECK(&find_schedule("zb-h2") == lookup_schedule("zb-h2"));
  CHECK(find_schedule("dualpipev").placement == PlacementKind::v_shape);
  CHECK_THROWS_WITH_AS(find_schedule("gpip"), "unknown schedule 'gpip', did you mean 'gpipe'?",
                       Error);
  CHECK_THROWS_WITH_AS(find_schedule("1f1b-splt"),
                       "unknown schedule '1f1b-splt', did you mean '1f1b-split'?", Error);
  CHECK_THROWS_WITH_AS(find_schedule("zbv"), "unknown schedule 'zbv', did you mean 'zb-v'?", Error);
  // Equally close names: the first listed wins (zb-h1 before zb-h2).
  CHECK_THROWS_WITH_AS(find_schedule("zb-h3"), "unknown schedule 'zb-h3', did you mean 'zb-h1'?",
                       Error);
  CHECK_THROWS_WITH_AS(find_schedule("GPipe"), "unknown schedule 'GPipe', did you mean 'gpipe'?",
                       Error);
  CHECK_THROWS_WITH_AS(find_schedule("megatron"),
                       "unknown schedule 'megatron' (see 'ppsim schedules')", Error);
  CHECK_THROWS_WITH_AS(find_schedule(""), "unknown schedule '' (see 'ppsim schedules')", Error);
}

TEST_CASE("lookup_schedule finds exact names only") {
  for (const ScheduleInfo &info : schedule_registry()) {
    CAPTURE(info.name);
    CHECK(lookup_schedule(info.name) == &info);
    CHECK(&find_schedule(info.name) == &info);
  }
  CHECK(lookup_schedule("gpip") == nullptr);
  CHECK(lookup_schedule("GPIPE") == nullptr);
  CHECK(lookup_schedule("") == nullptr);
  CHECK(lookup_schedule("1f1b ") == nullptr);
}

TEST_CASE("every entry's derived facts follow from its placement and default chunks") {
  for (const ScheduleInfo &info : schedule_registry()) {
    CAPTURE(info.name);
    CHECK_FALSE(info.description.empty());
    CHECK((info.generate != nullptr));
    CHECK(info.chunks(0) == info.default_chunks);
    CHECK(info.chunks(3) == 3);
    CHECK(info.pipes() == (info.placement == PlacementKind::dual_pipe ? 2 : 1));
    CHECK(info.stages_per_pipe(4, 0) == 4 * info.default_chunks);
    CHECK(info.stages_per_pipe(4, 2) == 8);
    CHECK(info.one_stage_per_device(0) == (info.default_chunks == 1 && info.pipes() == 1));
    CHECK_FALSE(info.one_stage_per_device(2));
    switch (info.placement) {
    case PlacementKind::single_wave:
    case PlacementKind::dual_pipe:
      CHECK(info.default_chunks == 1);
      break;
    case PlacementKind::v_shape:
      CHECK(info.default_chunks % 2 == 0);
      break;
    case PlacementKind::round_robin:
      CHECK(info.default_chunks >= 1);
      break;
    }
  }
  CHECK(find_schedule("dualpipe").pipes() == 2);
  CHECK_FALSE(find_schedule("dualpipe").one_stage_per_device(0));
  CHECK(find_schedule("1f1b").one_stage_per_device(0));
  CHECK(find_schedule("gpipe").one_stage_per_device(0));
  CHECK_FALSE(find_schedule("gpipe").one_stage_per_device(2));
}

TEST_CASE("every generator emits what its entry says: devices, stages, pipes and backward kinds") {
  for (const ScheduleInfo &info : schedule_registry()) {
    CAPTURE(info.name);
    const auto generated = ppsim::testing::generate(
        info.name, ppsim::testing::uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
    const ppsim::Scenario &scenario = generated.scenario;
    const ppsim::Schedule &schedule = generated.schedule;
    CHECK(schedule.name == info.name);
    CHECK(schedule.device_count() == 4);
    CHECK(scenario.pipes == info.pipes());
    CHECK(scenario.stages_per_pipe() == info.stages_per_pipe(4, 0));
    CHECK(scenario.stage_count() == info.stages_per_pipe(4, 0) * info.pipes());
    bool split = false, full = false;
    for (const auto &ops : schedule.device_ops) {
      for (const ppsim::Op &op : ops) {
        for (int part = 0; part < op.sub_op_count(); ++part) {
          const ppsim::OpKind kind = op.sub_op(part).kind;
          split = split || kind == ppsim::OpKind::backward_input ||
                  kind == ppsim::OpKind::backward_weight;
          full = full || kind == ppsim::OpKind::backward_full;
        }
      }
    }
    // A split schedule emits B and W; a full-backward one BW only.
    if (info.split_backward)
      CHECK(split);
    else
      CHECK_FALSE(split);
    if (!info.split_backward)
      CHECK(full);
  }
}

TEST_CASE("closed forms and in-flight counts exist only where the registry promises them") {
  std::set<std::string> with_closed_form, with_in_flight;
  for (const ScheduleInfo &info : schedule_registry()) {
    if (info.closed_form != nullptr)
      with_closed_form.insert(info.name);
    if (info.in_flight != nullptr)
      with_in_flight.insert(info.name);
  }
  CHECK(with_closed_form == std::set<std::string>{"gpipe", "1f1b", "1f1b-split", "interleaved-1f1b",
                                                  "hanayo", "zb-h1", "zb-h2", "zb-v",
                                                  "allremat-1f1b"});
  CHECK(with_in_flight == std::set<std::string>{"1f1b", "1f1b-split", "zb-h1", "zb-h2", "v-half"});
}

TEST_CASE("generate_schedule names the schedule after the entry") {
  const ScheduleInfo &info = find_schedule("zb-h1");
  const ppsim::Scenario scenario =
      ppsim::build_scenario(ppsim::testing::uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1}), info);
  const ppsim::Schedule schedule = ppsim::generate_schedule(info, scenario, {});
  CHECK(schedule.name == "zb-h1");
  CHECK(schedule.op_count() == 12); // F, B and W of 2 stages x 2 microbatches
}
