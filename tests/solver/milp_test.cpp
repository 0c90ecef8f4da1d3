// Model building and validation (solver/milp.cpp).
#include "solver/milp.h"

#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

namespace solver = ppsim::solver;
using solver::Sense;
using solver::VariableKind;

TEST_CASE("indices are dense and empty names get defaults") {
  solver::Model model;
  CHECK(model.add_variable("", 0, 1, VariableKind::continuous) == 0);
  CHECK(model.add_binary("y") == 1);
  CHECK(model.variables[0].name == "v0");
  CHECK(model.variables[1].kind == VariableKind::integer);
  CHECK(model.variables[1].upper == 1);
  CHECK(model.add_constraint("", {{0, 1}}, Sense::less_equal, 1) == 0);
  CHECK(model.constraints[0].name == "c0");
}

TEST_CASE("status names") {
  CHECK(std::string(solver::status_name(solver::Status::optimal)) == "optimal");
  CHECK(std::string(solver::status_name(solver::Status::no_solution)) == "no_solution");
}

namespace {
std::string lp_error(const solver::Model &model) {
  std::ostringstream out;
  try {
    solver::write_lp(model, out);
  } catch (const std::exception &error) {
    return error.what();
  }
  return "";
}
} // namespace

TEST_CASE("validation messages name the offending item") {
  solver::Model bad_name;
  bad_name.add_binary("1x");
  CHECK(lp_error(bad_name) ==
        "invalid variable name '1x': use letters, digits and '_', not starting with a digit");

  solver::Model duplicate;
  duplicate.add_binary("x");
  duplicate.add_binary("x");
  CHECK(lp_error(duplicate) == "duplicate variable name 'x'");

  solver::Model bad_index;
  bad_index.add_binary("x");
  bad_index.add_constraint("row", {{3, 1}}, Sense::equal, 1);
  CHECK(lp_error(bad_index) == "constraint 'row' uses unknown variable index 3");

  solver::Model bad_coefficient;
  bad_coefficient.add_binary("x");
  bad_coefficient.add_constraint("row", {{0, NAN}}, Sense::equal, 1);
  CHECK(lp_error(bad_coefficient) == "constraint 'row' has a non-finite coefficient");

  solver::Model bad_objective;
  bad_objective.add_variable("x", 0, 1, VariableKind::continuous, INFINITY);
  CHECK(lp_error(bad_objective) == "variable 'x' has a non-finite objective coefficient");

  solver::Model bad_bound;
  bad_bound.add_variable("x", solver::infinity, solver::infinity, VariableKind::continuous);
  CHECK(lp_error(bad_bound) == "variable 'x' has an invalid bound");

  solver::Model no_variables;
  no_variables.add_constraint("row", {}, Sense::equal, 0);
  CHECK(lp_error(no_variables) == "model has constraints but no variables");
}
