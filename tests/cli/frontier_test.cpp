// `ppsim frontier` in-process: the O-13 table and its error paths.
#include "cli/commands.h"
#include "tests/cli/command_support.h"

#include <doctest/doctest.h>

#include <new>
#include <sstream>
#include <system_error>
#include <vector>

using ppsim::cli::run_frontier;

namespace {

using ppsim::testing::Output;

Output frontier(const ppsim::cli::Args &args) { return ppsim::testing::run(run_frontier, args); }

} // namespace

TEST_CASE("ppsim frontier prints O-13 for p=4 m=8 unit costs") {
  const Output text = frontier({"-p", "4", "-m", "8", "--F", "1", "--B", "1", "--W", "1",
                                "--cost-unit", "stage", "--threads", "2"});
  CHECK(text.code == 0);
  CHECK(text.out == "v-auto frontier, p = 4, m = 8, cap 8 chunk activations\n"
                    " peak chunks  peak K  bubble slots  best max span\n"
                    "           4       2            11             59\n"
                    "           5     2.5             8             56\n"
                    "           6       3             5             53\n"
                    "           7     3.5             3             51\n"
                    "           8       4             0             48\n");
  const Output json =
      frontier({"-p", "4", "-m", "8", "--K", "3", "--cost-unit", "stage", "--format", "json"});
  CHECK(json.code == 0);
  CHECK(json.out ==
        "{\"devices\": 4, \"microbatches\": 8, \"cap_chunks\": 6, \"frontier\": ["
        "{\"peak_chunks\": 4, \"peak_K\": 2, \"bubble_slots\": 11, \"max_span\": 59}, "
        "{\"peak_chunks\": 5, \"peak_K\": 2.5, \"bubble_slots\": 8, \"max_span\": 56}, "
        "{\"peak_chunks\": 6, \"peak_K\": 3, \"bubble_slots\": 5, \"max_span\": 53}]}\n");
}

TEST_CASE(
    "issue_18 ppsim frontier reports its search on stderr, a line per sixth; -q silences it") {
  const ppsim::cli::Args args{"-p", "4", "-m", "8", "--threads", "2"};
  const Output lines = frontier(args);
  CHECK(lines.code == 0);
  CHECK(lines.err == "ppsim: frontier: 10/60 starting patterns\n"
                     "ppsim: frontier: 20/60 starting patterns\n"
                     "ppsim: frontier: 30/60 starting patterns\n"
                     "ppsim: frontier: 40/60 starting patterns\n"
                     "ppsim: frontier: 50/60 starting patterns\n"
                     "ppsim: frontier: 60/60 starting patterns\n"
                     "ppsim: wrote 5 frontier points to standard output\n");
  ppsim::cli::Args quiet = args;
  quiet.push_back("-q");
  const Output silent = frontier(quiet);
  CHECK(silent.code == 0);
  CHECK(silent.err.empty());
  CHECK(silent.out == lines.out);
}

TEST_CASE("ppsim frontier errors") {
  const Output format = frontier({"-p", "4", "--format", "yaml"});
  CHECK(format.code == 1);
  CHECK(format.err == "ppsim: error: field '--format': expected text or json, got \"yaml\"\n");
  const Output single = frontier({"-p", "1", "-m", "4"});
  CHECK(single.code == 1);
  CHECK(single.err == "ppsim: error: schedule 'v-auto' needs at least 2 devices (its building "
                      "blocks span p >= 2)\n");
}

TEST_CASE(
    "ppsim frontier takes a --K past 32 bits: the limit is 64-bit, the search the same as at 2p") {
  // --K 3e9 once wrapped to a negative int limit (docs/schedules.md, v-auto).
  const Output huge =
      frontier({"-p", "4", "-m", "8", "--K", "3e9", "--cost-unit", "stage", "--format", "json"});
  CHECK(huge.code == 0);
  const Output level =
      frontier({"-p", "4", "-m", "8", "--K", "4", "--cost-unit", "stage", "--format", "json"});
  REQUIRE(level.code == 0);
  CHECK(huge.out.find("\"cap_chunks\": 6000000000,") != std::string::npos);
  CHECK(huge.out.substr(huge.out.find("\"frontier\"")) ==
        level.out.substr(level.out.find("\"frontier\"")));
  const Output beyond = frontier({"-p", "4", "-m", "8", "--K", "1e300", "--cost-unit", "stage"});
  CHECK(beyond.code == 0);
  CHECK(beyond.out.find("cap 4611686018427387904 chunk activations") != std::string::npos);
}

namespace {

int out_of_memory(const ppsim::cli::Args &, std::ostream &, std::ostream &) {
  throw std::bad_alloc();
}
int too_long(const ppsim::cli::Args &, std::ostream &, std::ostream &) {
  std::vector<double> table;
  table.reserve(table.max_size() + 1); // std::length_error
  return 0;
}
int no_thread(const ppsim::cli::Args &, std::ostream &, std::ostream &) {
  throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                          "thread");
}

} // namespace

TEST_CASE("issue_17 out of memory or threads is one line and exit 1, never an internal error") {
  std::ostringstream out, err;
  CHECK(ppsim::cli::guarded(out_of_memory, {}, out, err, "'ppsim sweep'") == 1);
  CHECK(
      err.str() ==
      "ppsim: error: out of memory while running 'ppsim sweep' (the system refused an allocation; "
      "see the size limits in docs/reliability.md)\n");
  std::ostringstream err2;
  CHECK(ppsim::cli::guarded(too_long, {}, out, err2, "'ppsim simulate'") == 1);
  CHECK(err2.str().rfind("ppsim: error: out of memory while running 'ppsim simulate'", 0) == 0);
  std::ostringstream err3;
  CHECK(ppsim::cli::guarded(no_thread, {}, out, err3, "'ppsim sweep'") == 1);
  CHECK(err3.str().rfind(
            "ppsim: error: out of system resources while running 'ppsim sweep' (thread: ", 0) == 0);
}
