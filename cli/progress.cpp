#include "cli/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <iostream>
#include <string_view>
#include <unistd.h>

namespace ppsim::cli {
namespace po = boost::program_options;
namespace {

constexpr std::size_t kBarWidth = 24;
// At most ten redraws a second: a terminal that is redrawn faster only flickers.
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

// "0:07", "12:05", "1:02:05".
std::string clock_text(double seconds) {
  const auto whole = static_cast<long long>(std::llround(seconds));
  if (whole >= 3600)
    return fmt::format("{}:{:02}:{:02}", whole / 3600, whole / 60 % 60, whole % 60);
  return fmt::format("{}:{:02}", whole / 60, whole % 60);
}

// "3.5/s" when steps are quick, "15.2 s each" when they are not.
std::string rate_text(std::size_t done, double seconds) {
  const double per_second = static_cast<double>(done) / seconds;
  if (per_second >= 1)
    return fmt::format("{:.1f}/s", per_second);
  return fmt::format("{:.1f} s each", seconds / static_cast<double>(done));
}

} // namespace

void add_quiet_option(po::options_description &options) {
  options.add_options()("quiet,q", po::bool_switch(),
                        "no progress on standard error, and no line naming what was written");
}

ProgressMode progress_mode(const po::variables_map &values, const std::ostream &err) {
  if (values["quiet"].as<bool>())
    return ProgressMode::quiet;
  const char *term = std::getenv("TERM");
  const bool terminal = &err == &std::cerr && ::isatty(STDERR_FILENO) == 1 &&
                        (term == nullptr || std::string_view(term) != "dumb");
  return terminal ? ProgressMode::bar : ProgressMode::lines;
}

Progress::Progress(std::ostream &err, ProgressMode mode, std::string task, std::string unit,
                   std::size_t most_lines, Clock clock)
    : err_(err), mode_(mode), task_(std::move(task)), unit_(std::move(unit)),
      most_lines_(most_lines), clock_(std::move(clock)), start_(clock_()) {}

Progress::~Progress() { clear(); }

void Progress::report(std::size_t done, std::size_t total, std::string_view step) {
  // With `most_lines`, a line for each of the most_lines equal shares of the steps completed.
  const bool share_completed = most_lines_ == 0 || total <= most_lines_ ||
                               done * most_lines_ / total > last_line_done_ * most_lines_ / total;
  if (mode_ == ProgressMode::lines && done > 0 && share_completed) {
    last_line_done_ = done;
    err_ << fmt::format("ppsim: {}: {}/{} {}{}\n", task_, done, total, unit_,
                        step.empty() ? "" : fmt::format(" ({})", step))
         << std::flush;
  }
  if (mode_ != ProgressMode::bar || total == 0)
    return;
  const auto now = clock_();
  if (bar_shown_ && done < total && now - last_draw_ < kRedrawInterval)
    return;
  last_draw_ = now;
  bar_shown_ = true;
  const std::size_t filled = std::min(done, total) * kBarWidth / total;
  std::string text = fmt::format("{} [{}{}] {}/{} {}", task_, std::string(filled, '#'),
                                 std::string(kBarWidth - filled, ' '), done, total, unit_);
  const double seconds = std::chrono::duration<double>(now - start_).count();
  if (done > 0 && seconds > 0) {
    text += "  " + rate_text(done, seconds);
    if (done < total)
      text += "  ETA " +
              clock_text(seconds * static_cast<double>(total - done) / static_cast<double>(done));
  }
  // Back to the start of the line, and the rest of a longer earlier text erased.
  err_ << '\r' << text << "\033[K" << std::flush;
}

ProgressFn Progress::callback() {
  return [this](std::size_t done, std::size_t total, std::string_view step) {
    report(done, total, step);
  };
}

void Progress::clear() {
  if (!bar_shown_)
    return;
  err_ << "\r\033[K" << std::flush;
  bar_shown_ = false;
}

void Progress::finish(std::string_view written) {
  clear();
  if (mode_ != ProgressMode::quiet)
    err_ << fmt::format("ppsim: wrote {}\n", written) << std::flush;
}

} // namespace ppsim::cli
