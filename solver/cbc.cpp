// COIN-OR CBC backend of solve(): the model goes into an OsiClpSolverInterface and is solved
// through CbcMain0/CbcMain1 (the driver behind the `cbc` command), so CBC's preprocessing,
// cut generators and heuristics are on as in the command-line solver.
#include "base/index.h"
#include "solver/check_model.h"
#include "solver/milp.h"

#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ppsim::solver {
namespace {

int no_callback(CbcModel * /*model*/, int /*where_from*/) { return 0; }

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
  // The matrix is built in one go from triplets: appending rows one at a time reallocates it
  // each time, quadratic in the size of the remat ILP.
  std::vector<int> row_index, column_index;
  std::vector<double> elements;
  std::vector<double> row_lower, row_upper;
  for (const Constraint &constraint : model.constraints) {
    for (const Term &term : merged_terms(constraint.terms)) {
      row_index.push_back(static_cast<int>(row_lower.size()));
      column_index.push_back(term.variable);
      elements.push_back(term.coefficient);
    }
    const bool has_lower = constraint.sense != Sense::less_equal;
    const bool has_upper = constraint.sense != Sense::greater_equal;
    row_lower.push_back(has_lower ? constraint.rhs : -COIN_DBL_MAX);
    row_upper.push_back(has_upper ? constraint.rhs : COIN_DBL_MAX);
  }
  CoinPackedMatrix matrix(false, row_index.data(), column_index.data(), elements.data(),
                          static_cast<CoinBigIndex>(elements.size()));
  matrix.setDimensions(static_cast<int>(row_lower.size()), columns);
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

// The share of the limit CBC is told: it checks its clock only between phases and needs time to
// write its answer, and the parent stops it at the full limit.
double backend_seconds(double limit) { return std::max(0.0, 0.8 * limit - 0.05); }

MilpSolution solve_here(const Model &model, const Options &options) {
  MilpSolution result;
  const double direction = model.objective_sense == ObjectiveSense::minimize ? 1.0 : -1.0;
  {
    OsiClpSolverInterface solver;
    load(model, solver);
    solver.messageHandler()->setLogLevel(options.log ? 1 : 0);
    CbcModel cbc(solver);
    cbc.setLogLevel(options.log ? 1 : 0);
    CbcSolverUsefulData data;
    data.noPrinting_ = !options.log;
    data.useSignalHandler_ = false;
    CbcMain0(cbc, data);
    if (!options.start.empty()) {
      // CBC's driver reads a start by column name and completes the continuous part by an LP.
      std::vector<std::string> names;
      std::vector<double> values;
      for (std::size_t i = 0; i < model.variables.size(); ++i) {
        if (model.variables[i].kind != VariableKind::integer)
          continue;
        names.push_back(model.variables[i].name);
        values.push_back(options.start[i]);
      }
      std::vector<const char *> name_pointers;
      for (const std::string &name : names)
        name_pointers.push_back(name.c_str());
      for (std::size_t i = 0; i < model.variables.size(); ++i)
        cbc.solver()->setColName(static_cast<int>(i), model.variables[i].name);
      cbc.setMIPStart(static_cast<int>(names.size()), name_pointers.data(), values.data());
    }
    const std::string seconds = std::to_string(backend_seconds(options.time_limit_seconds));
    const std::string gap = std::to_string(std::max(0.0, options.relative_gap));
    const std::string log_level = options.log ? "1" : "0";
    std::vector<const char *> argv{"ppsim",         "-log",      log_level.c_str(),
                                   "-timeMode",     "elapsed",   "-sec",
                                   seconds.c_str(), "-ratioGap", gap.c_str()};
    if (!options.preprocess)
      argv.insert(argv.end(), {"-preprocess", "off"});
    const std::string nodes = std::to_string(options.node_limit);
    if (options.node_limit > 0)
      argv.insert(argv.end(), {"-maxNodes", nodes.c_str()});
    argv.insert(argv.end(), {"-solve", "-quit"});
    CbcMain1(static_cast<int>(argv.size()), argv.data(), cbc, no_callback, data);

    result.status = status_of(cbc);
    // CbcModel's secondary status: 3 = stopped on nodes, 4 = stopped on time.
    if (result.status == Status::feasible || result.status == Status::no_solution)
      result.limit = cbc.secondaryStatus() == 3 ? Limit::nodes : Limit::time;
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
  return result;
}

// The child's answer on the pipe: status, limit, objective, bound, value count, values.
void write_all(int fd, const void *data, std::size_t size) {
  const char *bytes = static_cast<const char *>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd, bytes, size);
    if (written <= 0) {
      if (written < 0 && errno == EINTR)
        continue;
      ::_exit(3);
    }
    bytes += written;
    size -= at(written);
  }
}

[[noreturn]] void answer_from_child(int fd, const Model &model, const Options &options) {
  // Pipes of solves started from other threads are not ours to hold open.
  ::close_range(3, static_cast<unsigned>(fd) - 1, 0);
  ::close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);
  if (!options.log) {
    // An assertion inside Clp prints its own multi-line message; the parent reports the death.
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0)
      ::dup2(null, STDERR_FILENO);
  }
  try {
    const MilpSolution result = solve_here(model, options);
    const int status = static_cast<int>(result.status);
    const int limit = static_cast<int>(result.limit);
    const std::uint64_t count = result.values.size();
    write_all(fd, &status, sizeof status);
    write_all(fd, &limit, sizeof limit);
    write_all(fd, &result.objective, sizeof result.objective);
    write_all(fd, &result.best_bound, sizeof result.best_bound);
    write_all(fd, &count, sizeof count);
    if (count > 0)
      write_all(fd, result.values.data(), count * sizeof(double));
  } catch (...) {
    ::_exit(4);
  }
  ::_exit(0);
}

// Reads the child's answer until it closes the pipe, or until `deadline`: CBC checks its time
// limit only between phases, and its preprocessing and first LP can run far past it.
// The child's answer, or nothing when the deadline passes or `stop` is set first (checked every
// 100 ms).
std::optional<std::string> read_until(int fd, std::chrono::steady_clock::time_point deadline,
                                      const std::atomic<bool> *stop) {
  std::string data;
  char buffer[65536];
  for (;;) {
    if (stop != nullptr && stop->load())
      return std::nullopt;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return std::nullopt;
    const std::int64_t slice = stop != nullptr ? 100 : std::int64_t{1} << 30;
    pollfd ready{fd, POLLIN, 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(std::min(left.count(), slice)));
    if (polled < 0 && errno == EINTR)
      continue;
    if (polled == 0)
      continue; // the deadline and `stop` are checked above
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return data;
    data.append(buffer, at(got));
  }
}

MilpSolution decode_answer(const std::string &data, std::size_t variables) {
  MilpSolution result;
  std::size_t offset = 0;
  const auto take = [&](void *into, std::size_t size) {
    if (offset + size > data.size())
      return false;
    if (size > 0)
      std::memcpy(into, data.data() + offset, size);
    offset += size;
    return true;
  };
  int status = 0;
  int limit = 0;
  std::uint64_t count = 0;
  const bool complete =
      take(&status, sizeof status) && take(&limit, sizeof limit) &&
      take(&result.objective, sizeof result.objective) &&
      take(&result.best_bound, sizeof result.best_bound) && take(&count, sizeof count) &&
      (count == 0 || count == variables) &&
      (result.values.resize(count), take(result.values.data(), count * sizeof(double)));
  if (!complete) {
    result.values.clear();
    result.status = Status::failed;
    result.failure = "the solver process returned a truncated answer";
    return result;
  }
  result.status = static_cast<Status>(status);
  result.limit = static_cast<Limit>(limit);
  return result;
}

std::string death_of(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const int signal = WTERMSIG(wait_status);
    return fmt::format("COIN-OR CBC died of signal {} ({})", signal, strsignal(signal));
  }
  return fmt::format("COIN-OR CBC exited with status {}", WEXITSTATUS(wait_status));
}

} // namespace

MilpSolution solve(const Model &model, const Options &options) {
  detail::check_model(model, options.start);
  const auto start = std::chrono::steady_clock::now();
  MilpSolution result;
  if (model.variables.empty()) {
    result.status = Status::optimal;
    return result;
  }
  // Each solve has its own process (CBC's driver keeps process-wide state), so callers may solve
  // several models from threads at once.
  int fds[2];
  if (::pipe(fds) != 0)
    throw std::runtime_error("cannot create a pipe for the solver process");
  std::fflush(nullptr); // nothing buffered is written twice by the child
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("cannot start the solver process");
  }
  if (child == 0) {
    ::close(fds[0]);
    answer_from_child(fds[1], model, options);
  }
  ::close(fds[1]);
  // Capped, so that any limit a user writes stays a representable deadline.
  const double limit_seconds = std::clamp(options.time_limit_seconds, 0.0, 1e7);
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                    std::chrono::duration<double>(limit_seconds));
  const std::optional<std::string> answer = read_until(fds[0], deadline, options.stop);
  if (!answer)
    ::kill(child, SIGKILL);
  ::close(fds[0]);
  int wait_status = 0;
  while (::waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (!answer) {
    result.status = Status::no_solution; // the time limit ran out before CBC could answer
    result.limit = Limit::time;
  } else if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) {
    result = decode_answer(*answer, model.variables.size());
  } else {
    result.status = Status::failed;
    result.failure = death_of(wait_status);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

} // namespace ppsim::solver
