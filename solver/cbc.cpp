// COIN-OR CBC backend of solve(): the model goes into an OsiClpSolverInterface and is solved
// through CbcMain0/CbcMain1 (the driver behind the `cbc` command), so CBC's preprocessing,
// cut generators and heuristics are on as in the command-line solver.
#include "solver/check_model.h"
#include "solver/milp.h"

#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <CoinPackedMatrix.hpp>
#include <CoinPackedVector.hpp>
#include <OsiClpSolverInterface.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

namespace ppsim::solver {
namespace {

// CBC's driver keeps some process-wide state (message handlers, signal setup), so solves are
// serialized; a caller solving many models in threads still gets correct answers.
std::mutex cbc_mutex;

int no_callback(CbcModel * /*model*/, int /*where_from*/) { return 0; }

// Merges repeated variables of a constraint (CoinPackedMatrix requires unique indices).
CoinPackedVector merged_row(const std::vector<Term> &terms) {
  std::vector<Term> sorted = terms;
  std::sort(sorted.begin(), sorted.end(),
            [](const Term &a, const Term &b) { return a.variable < b.variable; });
  CoinPackedVector row;
  for (std::size_t i = 0; i < sorted.size();) {
    double coefficient = 0;
    const int variable = sorted[i].variable;
    for (; i < sorted.size() && sorted[i].variable == variable; ++i)
      coefficient += sorted[i].coefficient;
    if (coefficient != 0)
      row.insert(variable, coefficient);
  }
  return row;
}

void load(const Model &model, OsiClpSolverInterface &solver) {
  const int columns = static_cast<int>(model.variables.size());
  // Maximization is solved as minimization of the negated objective.
  const double direction = model.objective_sense == ObjectiveSense::minimize ? 1.0 : -1.0;
  std::vector<double> lower(columns), upper(columns), objective(columns);
  for (int i = 0; i < columns; ++i) {
    const Variable &variable = model.variables[i];
    lower[i] = variable.lower == -infinity ? -COIN_DBL_MAX : variable.lower;
    upper[i] = variable.upper == infinity ? COIN_DBL_MAX : variable.upper;
    objective[i] = direction * variable.objective;
  }
  CoinPackedMatrix matrix(false, 0, 0);
  matrix.setDimensions(0, columns);
  std::vector<double> row_lower, row_upper;
  for (const Constraint &constraint : model.constraints) {
    matrix.appendRow(merged_row(constraint.terms));
    const bool has_lower = constraint.sense != Sense::less_equal;
    const bool has_upper = constraint.sense != Sense::greater_equal;
    row_lower.push_back(has_lower ? constraint.rhs : -COIN_DBL_MAX);
    row_upper.push_back(has_upper ? constraint.rhs : COIN_DBL_MAX);
  }
  solver.loadProblem(matrix, lower.data(), upper.data(), objective.data(), row_lower.data(),
                     row_upper.data());
  for (int i = 0; i < columns; ++i)
    if (model.variables[i].kind == VariableKind::integer)
      solver.setInteger(i);
}

Status status_of(const CbcModel &cbc) {
  const bool has_solution = cbc.bestSolution() != nullptr;
  if (cbc.isProvenInfeasible())
    return Status::infeasible;
  if (cbc.isContinuousUnbounded())
    return Status::unbounded;
  // Status 0 = search completed; secondary status 2 = stopped because the gap was reached.
  if (has_solution && (cbc.status() == 0 || cbc.secondaryStatus() == 2))
    return Status::optimal;
  if (has_solution)
    return Status::feasible;
  if (cbc.status() == 0)
    return Status::infeasible;
  return Status::no_solution;
}

} // namespace

Result solve(const Model &model, const Options &options) {
  detail::check_model(model);
  const auto start = std::chrono::steady_clock::now();
  Result result;
  const double direction = model.objective_sense == ObjectiveSense::minimize ? 1.0 : -1.0;
  if (model.variables.empty()) {
    result.status = Status::optimal;
    return result;
  }
  {
    const std::lock_guard<std::mutex> lock(cbc_mutex);
    OsiClpSolverInterface solver;
    load(model, solver);
    solver.messageHandler()->setLogLevel(options.log ? 1 : 0);
    CbcModel cbc(solver);
    cbc.setLogLevel(options.log ? 1 : 0);
    CbcSolverUsefulData data;
    data.noPrinting_ = !options.log;
    data.useSignalHandler_ = false;
    CbcMain0(cbc, data);
    const std::string seconds = std::to_string(std::max(0.0, options.time_limit_seconds));
    const std::string gap = std::to_string(std::max(0.0, options.relative_gap));
    const std::string log_level = options.log ? "1" : "0";
    const char *argv[] = {"ppsim", "-log",          log_level.c_str(), "-timeMode", "elapsed",
                          "-sec",  seconds.c_str(), "-ratioGap",       gap.c_str(), "-solve",
                          "-quit"};
    CbcMain1(static_cast<int>(std::size(argv)), argv, cbc, no_callback, data);

    result.status = status_of(cbc);
    if (result.has_solution()) {
      const double *solution = cbc.bestSolution();
      result.values.assign(solution, solution + model.variables.size());
      for (std::size_t i = 0; i < model.variables.size(); ++i)
        if (model.variables[i].kind == VariableKind::integer)
          result.values[i] = std::round(result.values[i]);
      result.objective = 0;
      for (std::size_t i = 0; i < model.variables.size(); ++i)
        result.objective += model.variables[i].objective * result.values[i];
      result.best_bound = direction * cbc.getBestPossibleObjValue();
      if (result.status == Status::optimal &&
          direction * result.best_bound > direction * result.objective)
        result.best_bound = result.objective;
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace ppsim::solver
