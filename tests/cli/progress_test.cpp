// cli/progress: the bar on a terminal (with a fake clock, so its rate and ETA are exact), the
// lines when standard error is not a terminal, --quiet, and the final line.
#include "cli/progress.h"

#include "cli/scenario_options.h"

#include <doctest/doctest.h>

#include <chrono>
#include <sstream>
#include <string>

using ppsim::cli::Progress;
using ppsim::cli::ProgressMode;

namespace {

// A clock the test moves by hand.
struct FakeClock {
  std::chrono::steady_clock::time_point now{};
  void advance(double seconds) {
    now += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(seconds));
  }
  [[nodiscard]] Progress::Clock clock() {
    return [this] { return now; };
  }
};

// What the terminal shows after one redraw: back to the line's start, the text, the rest erased.
std::string redraw(const std::string &text) { return "\r" + text + "\033[K"; }

} // namespace

TEST_CASE("the bar: done/total, rate and ETA from the clock, at most ten redraws a second") {
  std::ostringstream err;
  FakeClock clock;
  Progress progress(err, ProgressMode::bar, "sweep", "points", 0, clock.clock());
  progress.report(0, 10, "");
  std::string screen = redraw("sweep [                        ] 0/10 points");
  CHECK(err.str() == screen);
  clock.advance(0.05); // within 100 ms of the last redraw: not drawn
  progress.report(1, 10, "run 0");
  CHECK(err.str() == screen);
  clock.advance(1.95); // 2 steps in 2 s, 8 to go
  progress.report(2, 10, "run 1");
  screen += redraw("sweep [####                    ] 2/10 points  1.0/s  ETA 0:08");
  CHECK(err.str() == screen);
  clock.advance(598); // slow steps: seconds each, and the ETA in minutes
  progress.report(3, 10, "run 2");
  screen += redraw("sweep [#######                 ] 3/10 points  200.0 s each  ETA 23:20");
  CHECK(err.str() == screen);
  clock.advance(2400); // in hours
  progress.report(4, 10, "run 3");
  screen += redraw("sweep [#########               ] 4/10 points  750.0 s each  ETA 1:15:00");
  CHECK(err.str() == screen);
  clock.advance(0.01); // the last step is always drawn, with no ETA
  progress.report(10, 10, "run 9");
  screen += redraw("sweep [########################] 10/10 points  300.0 s each");
  CHECK(err.str() == screen);
  progress.clear();
  screen += "\r\033[K";
  CHECK(err.str() == screen);
  progress.finish("10 rows to out.csv");
  CHECK(err.str() == screen + "ppsim: wrote 10 rows to out.csv\n");
}

TEST_CASE("a bar still on screen is erased when the command ends early") {
  std::ostringstream err;
  FakeClock clock;
  {
    Progress progress(err, ProgressMode::bar, "remat --auto", "candidates", 0, clock.clock());
    progress.report(0, 4, "");
    clock.advance(30);
    progress.report(1, 4, "zb-h1: optimal");
  } // an error unwinds here; its line must start on a clean line
  CHECK(err.str() == redraw("remat --auto [                        ] 0/4 candidates") +
                         redraw("remat --auto [######                  ] 1/4 candidates  30.0 s "
                                "each  ETA 1:30") +
                         "\r\033[K");
}

TEST_CASE("lines: one per completed report, none for the start; then the final line") {
  std::ostringstream err;
  Progress progress(err, ProgressMode::lines, "sweep", "points");
  progress.report(0, 3, "");
  progress.report(1, 3, "run 2");
  progress.report(3, 3, "");
  progress.clear(); // no bar to erase
  progress.finish("3 rows to standard output");
  CHECK(err.str() == "ppsim: sweep: 1/3 points (run 2)\n"
                     "ppsim: sweep: 3/3 points\n"
                     "ppsim: wrote 3 rows to standard output\n");
}

TEST_CASE("lines with a most_lines: one per share of the steps, however they arrive") {
  std::ostringstream err;
  Progress progress(err, ProgressMode::lines, "frontier", "starting patterns", 3);
  for (std::size_t done = 0; done <= 6; ++done)
    progress.report(done, 6, "");
  progress.report(2, 2, ""); // no more steps than lines: each one
  CHECK(err.str() == "ppsim: frontier: 2/6 starting patterns\n"
                     "ppsim: frontier: 4/6 starting patterns\n"
                     "ppsim: frontier: 6/6 starting patterns\n"
                     "ppsim: frontier: 2/2 starting patterns\n");
}

TEST_CASE("quiet writes nothing, not even the final line") {
  std::ostringstream err;
  Progress progress(err, ProgressMode::quiet, "sweep", "points");
  progress.report(0, 2, "");
  progress.report(2, 2, "run 1");
  progress.finish("2 rows to out.csv");
  CHECK(err.str().empty());
}

TEST_CASE("progress_mode: quiet with -q, lines on a stream that is not a terminal") {
  namespace po = boost::program_options;
  po::options_description options;
  ppsim::cli::add_quiet_option(options);
  const po::positional_options_description positional;
  std::ostringstream err;
  CHECK(ppsim::cli::progress_mode(ppsim::cli::parse_command({"-q"}, options, positional), err) ==
        ProgressMode::quiet);
  CHECK(ppsim::cli::progress_mode(ppsim::cli::parse_command({"--quiet"}, options, positional),
                                  err) == ProgressMode::quiet);
  CHECK(ppsim::cli::progress_mode(ppsim::cli::parse_command({}, options, positional), err) ==
        ProgressMode::lines);
}
