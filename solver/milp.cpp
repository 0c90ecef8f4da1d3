// Model building and validation shared by every backend and the LP writer.
#include "solver/milp.h"

#include "base/error.h"
#include "solver/check_model.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace ppsim::solver {

int Model::add_variable(std::string name, double lower, double upper, VariableKind kind,
                        double objective) {
  const int index = static_cast<int>(variables.size());
  if (name.empty())
    name = "v" + std::to_string(index);
  variables.push_back({std::move(name), lower, upper, kind, objective});
  return index;
}

std::vector<Term> merged_terms(const std::vector<Term> &terms) {
  std::vector<Term> sorted = terms;
  std::sort(sorted.begin(), sorted.end(),
            [](const Term &a, const Term &b) { return a.variable < b.variable; });
  std::vector<Term> merged;
  for (std::size_t i = 0; i < sorted.size();) {
    Term sum{sorted[i].variable, 0};
    for (; i < sorted.size() && sorted[i].variable == sum.variable; ++i)
      sum.coefficient += sorted[i].coefficient;
    if (sum.coefficient != 0)
      merged.push_back(sum);
  }
  return merged;
}

int Model::add_binary(std::string name, double objective) {
  return add_variable(std::move(name), 0, 1, VariableKind::integer, objective);
}

int Model::add_constraint(std::string name, std::vector<Term> terms, Sense sense, double rhs) {
  const int index = static_cast<int>(constraints.size());
  if (name.empty())
    name = "c" + std::to_string(index);
  constraints.push_back({std::move(name), std::move(terms), sense, rhs});
  return index;
}

const char *status_name(Status status) {
  switch (status) {
  case Status::optimal:
    return "optimal";
  case Status::feasible:
    return "feasible";
  case Status::infeasible:
    return "infeasible";
  case Status::unbounded:
    return "unbounded";
  case Status::no_solution:
    return "no_solution";
  case Status::failed:
    return "failed";
  }
  return "unknown";
}

unsigned concurrent_solves(unsigned wanted) {
#if defined(__SANITIZE_ADDRESS__)
  return wanted > 0 ? 1 : 0;
#else
  return wanted;
#endif
}

const char *limit_name(Limit limit) {
  switch (limit) {
  case Limit::none:
    return "";
  case Limit::time:
    return "time limit";
  case Limit::nodes:
    return "node limit";
  }
  return "";
}

namespace detail {
namespace {

bool is_valid_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9'))
    return false;
  for (const char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok)
      return false;
  }
  return true;
}

void check_name(std::string_view kind, const std::string &name,
                std::unordered_set<std::string_view> &seen) {
  if (!is_valid_name(name))
    throw Error("invalid " + std::string(kind) + " name '" + name +
                "': use letters, digits and '_', not starting with a digit");
  if (!seen.insert(name).second)
    throw Error("duplicate " + std::string(kind) + " name '" + name + "'");
}

} // namespace

void check_model(const Model &model, const std::vector<double> &start) {
  if (!start.empty() && start.size() != model.variables.size())
    throw Error("a start gives " + std::to_string(start.size()) + " values for " +
                std::to_string(model.variables.size()) + " variables");
  std::unordered_set<std::string_view> seen;
  seen.reserve(model.variables.size());
  for (const Variable &variable : model.variables) {
    check_name("variable", variable.name, seen);
    if (std::isnan(variable.lower) || std::isnan(variable.upper) || variable.lower == infinity ||
        variable.upper == -infinity)
      throw Error("variable '" + variable.name + "' has an invalid bound");
    if (variable.lower > variable.upper)
      throw Error("variable '" + variable.name + "' has lower bound above its upper bound");
    if (!std::isfinite(variable.objective))
      throw Error("variable '" + variable.name + "' has a non-finite objective coefficient");
  }
  seen.clear();
  seen.reserve(model.constraints.size());
  const int variable_count = static_cast<int>(model.variables.size());
  if (variable_count == 0 && !model.constraints.empty())
    throw Error("model has constraints but no variables");
  for (const Constraint &constraint : model.constraints) {
    check_name("constraint", constraint.name, seen);
    if (std::isnan(constraint.rhs))
      throw Error("constraint '" + constraint.name + "' has a NaN right-hand side");
    for (const Term &term : constraint.terms) {
      if (term.variable < 0 || term.variable >= variable_count)
        throw Error("constraint '" + constraint.name + "' uses unknown variable index " +
                    std::to_string(term.variable));
      if (!std::isfinite(term.coefficient))
        throw Error("constraint '" + constraint.name + "' has a non-finite coefficient");
    }
  }
}

} // namespace detail
} // namespace ppsim::solver
