#pragma once
// A small mixed-integer linear program (MILP) model and its solver entry point, shared by the
// exact optimum of bounds/ (docs/bounds.md, "Exact optimum") and the rematerialization ILP of
// remat/ (docs/remat.md, "The ILP (ppsim form)"). The model is plain data; `solve` runs the
// COIN-OR CBC backend (solver/cbc.cpp), and a later backend (HiGHS, a commercial solver) would only
// add another `solve`.
//
// Usage:
//   ppsim::solver::Model model;
//   const int x = model.add_variable("x", 0, 4, ppsim::solver::VariableKind::integer, 3.0);
//   const int y = model.add_binary("y", 2.0);
//   model.add_constraint("cap", {{x, 1.0}, {y, 2.0}}, ppsim::solver::Sense::less_equal, 5);
//   model.objective_sense = ppsim::solver::ObjectiveSense::maximize;
//   const ppsim::solver::MilpSolution result = ppsim::solver::solve(model, {.time_limit_seconds =
//   10}); if (result.has_solution()) use(result.values[x]);
#include <atomic>
#include <iosfwd>
#include <limits>
#include <string>
#include <vector>

namespace ppsim::solver {

/// Bound value meaning "no bound" (lower `-infinity` or upper `+infinity`).
inline constexpr double infinity = std::numeric_limits<double>::infinity();

enum class VariableKind { continuous, integer };
enum class Sense { less_equal, greater_equal, equal };
enum class ObjectiveSense { minimize, maximize };

struct Variable {
  std::string name; ///< used in LP files; letters, digits and `_` only
  double lower = 0;
  double upper = infinity;
  VariableKind kind = VariableKind::continuous;
  double objective = 0; ///< objective coefficient
};

/// One term `coefficient * variable` of a linear expression; `variable` is an index.
struct Term {
  int variable = 0;
  double coefficient = 0;
};

/// `sum(terms) sense rhs`. Repeated variables in `terms` are summed.
struct Constraint {
  std::string name;
  std::vector<Term> terms;
  Sense sense = Sense::less_equal;
  double rhs = 0;
};

/// A MILP: variables (dense indices in insertion order), constraints, a linear objective.
struct Model {
  std::vector<Variable> variables;
  std::vector<Constraint> constraints;
  ObjectiveSense objective_sense = ObjectiveSense::minimize;

  /// Adds a variable and returns its index. An empty name becomes `v<index>`.
  int add_variable(std::string name, double lower, double upper, VariableKind kind,
                   double objective = 0);
  /// Adds an integer variable with bounds [0, 1].
  int add_binary(std::string name, double objective = 0);
  /// Adds a constraint and returns its index. An empty name becomes `c<index>`.
  int add_constraint(std::string name, std::vector<Term> terms, Sense sense, double rhs);
};

struct Options {
  /// Wall-clock limit of the whole solve: the backend is told a share of it so that it answers
  /// with its best solution in time, and is stopped at the limit if it has not.
  double time_limit_seconds = 60;
  double relative_gap = 0; ///< stop when (incumbent - bound) / |incumbent| <= this
  bool log = false;        ///< let the backend print its log to stdout
  /// CBC's preprocessing (CglPreProcess). Off for models whose rows are tight at the optimum:
  /// on the remat ILP it declared feasible models infeasible and returned worse plans.
  bool preprocess = true;
  /// A feasible solution to start from (one value per variable; only the integer variables are
  /// read, the solver completes the rest): the search then never returns anything worse.
  std::vector<double> start{};
  /// When set (Ctrl-C in Python), the solve ends within 0.1 s as at its time limit.
  const std::atomic<bool> *stop = nullptr;
  /// Branch-and-bound nodes the search may explore (0: no limit). Unlike the wall clock, it
  /// stops a solve at the same point on any machine and under any load.
  std::int64_t node_limit = 0;
};

/// The limit that ended a search before it finished, if one did.
enum class Limit { none, time, nodes };

/// "time limit" or "node limit" ("" for none), for messages.
const char *limit_name(Limit limit);

enum class Status {
  optimal,     ///< proven optimal within `relative_gap`
  feasible,    ///< a solution was found, the limit stopped the proof
  infeasible,  ///< proven to have no solution
  unbounded,   ///< the relaxation is unbounded
  no_solution, ///< the limit stopped the search before any solution was found
  failed,      ///< the solver process died (an assertion inside the LP library); see `failure`
};

struct MilpSolution {
  Status status = Status::no_solution;
  double objective = 0;       ///< of the returned solution (valid when has_solution())
  double best_bound = 0;      ///< proven bound on the optimum in the objective's direction
  std::vector<double> values; ///< one per variable (empty when !has_solution())
  double seconds = 0;         ///< wall-clock solve time
  std::string failure;        ///< how the solver died, when status is failed
  Limit limit = Limit::none;  ///< what stopped the search (status feasible or no_solution)

  [[nodiscard]] bool has_solution() const {
    return status == Status::optimal || status == Status::feasible;
  }
};

/// Solves `model` with COIN-OR CBC. Integer variables are returned rounded to the nearest
/// integer. Throws ppsim::Error when the model itself is malformed (bad index, lower > upper,
/// NaN coefficient, invalid name). CBC runs in a child process: Clp can end the process with a
/// failed assertion on some badly scaled models, and that must not take ppsim (and the other
/// results of a comparison) down with it; such a death is returned as Status::failed.
MilpSolution solve(const Model &model, const Options &options);

/// How many solves may run at once where `wanted` threads were asked for. A solve forks its CBC
/// process, and AddressSanitizer's allocator (GCC 12's libasan) is not fork-safe: a process
/// forked while another thread allocates can deadlock until its time limit kills it. Sanitizer
/// builds therefore solve one at a time: the same results, later.
unsigned concurrent_solves(unsigned wanted);

/// The terms with repeated variables summed and zero sums dropped, by variable index (what a
/// matrix row or an LP file line holds).
std::vector<Term> merged_terms(const std::vector<Term> &terms);

/// Writes `model` in the CPLEX LP text format (readable by CBC, CPLEX, Gurobi, HiGHS, GLPK).
/// Throws ppsim::Error on a malformed model, as `solve` does.
void write_lp(const Model &model, std::ostream &out);

/// Lowercase name of a status ("optimal", "feasible", ...), for messages and JSON.
const char *status_name(Status status);

} // namespace ppsim::solver
