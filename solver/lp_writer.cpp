// CPLEX LP text format writer (the format CBC, CPLEX, Gurobi, HiGHS and GLPK read).
#include "solver/check_model.h"
#include "solver/milp.h"

#include <fmt/format.h>

#include <ostream>

namespace ppsim::solver {
namespace {

// Writes " + 3 x - 2 y" style sums; `fmt`'s "{}" is the shortest exact round trip of a double.
void write_terms(std::ostream &out, const Model &model, const std::vector<Term> &terms) {
  bool first = true;
  for (const Term &term : merged_terms(terms)) {
    const bool negative = term.coefficient < 0;
    if (negative)
      out << " -";
    else if (!first)
      out << " +";
    out << ' ' << fmt::format("{}", negative ? -term.coefficient : term.coefficient) << ' '
        << model.variables[term.variable].name;
    first = false;
  }
  // An empty sum is written as zero times the first variable, which every reader accepts.
  if (first)
    out << " 0 " << model.variables.front().name;
}

void write_bound(std::ostream &out, const Variable &variable) {
  const bool default_bounds = variable.lower == 0 && variable.upper == infinity;
  if (default_bounds)
    return;
  out << ' ';
  if (variable.lower == variable.upper) {
    out << variable.name << " = " << fmt::format("{}", variable.lower);
  } else if (variable.lower == -infinity && variable.upper == infinity) {
    out << variable.name << " free";
  } else {
    out << (variable.lower == -infinity ? std::string("-inf") : fmt::format("{}", variable.lower))
        << " <= " << variable.name << " <= "
        << (variable.upper == infinity ? std::string("+inf") : fmt::format("{}", variable.upper));
  }
  out << '\n';
}

} // namespace

void write_lp(const Model &model, std::ostream &out) {
  detail::check_model(model);
  out << "\\ written by ppsim\n";
  out << (model.objective_sense == ObjectiveSense::minimize ? "Minimize\n" : "Maximize\n");
  out << " obj:";
  std::vector<Term> objective;
  for (int i = 0; i < static_cast<int>(model.variables.size()); ++i)
    if (model.variables[i].objective != 0)
      objective.push_back({i, model.variables[i].objective});
  if (!model.variables.empty())
    write_terms(out, model, objective);
  out << "\nSubject To\n";
  for (const Constraint &constraint : model.constraints) {
    out << ' ' << constraint.name << ':';
    write_terms(out, model, constraint.terms);
    const char *relation = constraint.sense == Sense::less_equal      ? "<="
                           : constraint.sense == Sense::greater_equal ? ">="
                                                                      : "=";
    out << ' ' << relation << ' ' << fmt::format("{}", constraint.rhs) << '\n';
  }
  out << "Bounds\n";
  for (const Variable &variable : model.variables)
    write_bound(out, variable);
  bool any_integer = false;
  for (const Variable &variable : model.variables) {
    if (variable.kind != VariableKind::integer)
      continue;
    if (!any_integer)
      out << "Generals\n";
    any_integer = true;
    out << ' ' << variable.name << '\n';
  }
  out << "End\n";
}

} // namespace ppsim::solver
