#pragma once
// Progress of a long computation (sweep points, remat --auto candidates, v-auto patterns, ...),
// reported to whoever runs it: the libraries count their steps and never print; the command line
// draws a bar or writes lines (docs/architecture.md, "Progress on standard error").
#include <cstddef>
#include <functional>
#include <mutex>
#include <string_view>
#include <utility>

namespace ppsim {

/// Told that `done` of `total` steps are complete; `step` names the ones that just completed
/// ("" when steps have no names). Called once with `done` = 0 when the computation starts.
using ProgressFn = std::function<void(std::size_t done, std::size_t total, std::string_view step)>;

/// Counts the completed steps of one computation for a ProgressFn (which may be empty: nothing is
/// reported). Safe to call from worker threads: the calls never overlap, and `done` grows in the
/// order the steps complete, so a report never goes backwards.
class ProgressCounter {
public:
  /// Reports the start (0 of `total`).
  ProgressCounter(ProgressFn report, std::size_t total)
      : report_(std::move(report)), total_(total) {
    if (report_)
      report_(0, total_, "");
  }

  /// `count` more steps are complete (several at once when they need no work).
  void steps_done(std::size_t count, std::string_view step = "") {
    if (!report_ || count == 0)
      return;
    const std::lock_guard lock(mutex_);
    done_ += count;
    report_(done_, total_, step);
  }
  /// One more step is complete.
  void step_done(std::string_view step = "") { steps_done(1, step); }

private:
  ProgressFn report_;
  std::size_t total_;
  std::size_t done_ = 0;
  std::mutex mutex_;
};

} // namespace ppsim
