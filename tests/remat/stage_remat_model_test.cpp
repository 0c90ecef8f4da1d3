// The StageRemat ILP's model (docs/remat.md, "The ILP (ppsim form)"): its variables by name, and
// what it refuses to build.
#include "remat/stage_remat_model.h"

#include "base/error.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <sstream>
#include <string>

using namespace ppsim;
using ppsim::testing::uniform_input;

TEST_CASE("LP output names the variables of the ILP (docs/remat.md)") {
  ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 1.5;
  const testing::Generated b = testing::generate("1f1b-split", input);
  const StageRematModel built = build_stage_remat_model(b.scenario, b.schedule);
  std::ostringstream lp;
  solver::write_lp(built.model, lp);
  for (const char *name : {"x_0_1", "y_1_0", "z_0_0", "E_0_0_f", "E_1_1_w", "E_0_1_rbw", "Tmax"}) {
    CAPTURE(name);
    CHECK(lp.str().find(name) != std::string::npos);
  }
  // 2 x (x, y, z) per (s,j) of split stages.
  int binaries = 0;
  for (const solver::Variable &v : built.model.variables)
    binaries += v.kind == solver::VariableKind::integer;
  CHECK(binaries == 3 * 2 * 2);
}

TEST_CASE("a model built until a deadline: nothing once it has passed, the same model before") {
  ScenarioInput input = uniform_input(2, 4, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 1.5;
  const testing::Generated b = testing::generate("1f1b-split", input);
  const auto now = std::chrono::steady_clock::now();
  CHECK_FALSE(build_stage_remat_model_until(b.scenario, b.schedule, IlpForm::ppsim, false, now));
  const std::optional<StageRematModel> in_time = build_stage_remat_model_until(
      b.scenario, b.schedule, IlpForm::ppsim, true, now + std::chrono::hours(1));
  REQUIRE(in_time);
  const StageRematModel least_peak = build_minimum_peak_model(b.scenario, b.schedule);
  CHECK(in_time->model.variables.size() == least_peak.model.variables.size());
  CHECK(in_time->model.constraints.size() == least_peak.model.constraints.size());
  CHECK(in_time->peak_variable == least_peak.peak_variable);
  CHECK(in_time->peak_variable >= 0);
}
