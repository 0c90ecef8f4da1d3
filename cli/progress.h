#pragma once
// Progress on standard error for the commands that can run for minutes (docs/architecture.md,
// "Progress on standard error"): a redrawn bar on a terminal, one line per completed step
// otherwise, nothing with --quiet; then one line saying what was written where.
#include "base/progress.h"

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace ppsim::cli {

enum class ProgressMode {
  bar,   ///< one line redrawn in place: done/total, rate and ETA
  lines, ///< one line per report of completed steps
  quiet, ///< nothing, not even the final line
};

/// Adds -q/--quiet.
void add_quiet_option(boost::program_options::options_description &options);

/// quiet with --quiet; bar when `err` is this process's standard error and that is a terminal
/// (TERM is not "dumb"); lines otherwise.
ProgressMode progress_mode(const boost::program_options::variables_map &values,
                           const std::ostream &err);

/// The progress of one command. Reports come through `callback()` (or `report`) one at a time, as
/// ProgressCounter makes them.
class Progress {
public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  /// `task` names the command in every line ("sweep", "remat --auto"); `unit` the steps, plural
  /// ("points"). Line mode writes at most `most_lines` lines when steps are many and quick
  /// (0: one per report). The clock is the rate's and the ETA's, and paces the bar's redraws.
  Progress(std::ostream &err, ProgressMode mode, std::string task, std::string unit,
           std::size_t most_lines = 0, Clock clock = std::chrono::steady_clock::now);
  ~Progress(); ///< erases a bar still on screen, so an error line starts a clean line
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  /// `done` of `total` steps are complete, the last ones named `step` (see ProgressFn).
  void report(std::size_t done, std::size_t total, std::string_view step);
  /// A ProgressFn for the libraries, calling `report`.
  [[nodiscard]] ProgressFn callback();
  /// Erases the bar; call before the command prints its result to standard output.
  void clear();
  /// Erases the bar and writes "ppsim: wrote WRITTEN" ("42 rows to results.csv").
  void finish(std::string_view written);

private:
  std::ostream &err_;
  ProgressMode mode_;
  std::string task_;
  std::string unit_;
  std::size_t most_lines_;
  std::size_t last_line_done_ = 0;
  Clock clock_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  bool bar_shown_ = false;
};

} // namespace ppsim::cli
