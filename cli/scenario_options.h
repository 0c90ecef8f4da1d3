#pragma once
// The scenario flags shared by simulate, compare, bounds, remat and export: a positional
// scenario file, then flags that override its fields (docs/model.md, "Command line and JSON": flags
// win).
#include "run/run_input.h"

#include <boost/program_options.hpp>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

namespace ppsim::cli {

/// Adds -p, -m, -v, --schedule, --F/--B/--W, --comm, --K, --memory, ... and --set KEY=VALUE.
void add_scenario_options(boost::program_options::options_description &options);

/// Declares the optional positional SCENARIO.toml argument.
void add_scenario_positional(boost::program_options::options_description &options,
                             boost::program_options::positional_options_description &positional);

/// Reads the scenario file (if any) and applies the flags given on the command line.
RunInput scenario_from_options(const boost::program_options::variables_map &values);

/// The files a scenario command reads: the scenario file, the cost file, the schedule file and a
/// remat plan file (`remat.policy = "file:PLAN"`), so that no output replaces one of them.
std::vector<std::string> scenario_input_files(const boost::program_options::variables_map &values,
                                              const RunInput &input);

/// Parses `args` with `options` (and the positional scenario), rejecting unknown flags.
boost::program_options::variables_map
parse_command(const std::vector<std::string> &args,
              const boost::program_options::options_description &options,
              const boost::program_options::positional_options_description &positional);

/// The start of a command whose one positional argument is the file option `file_option`:
/// parses `args` and prints the help (returning nullopt) when asked.
std::optional<boost::program_options::variables_map>
parse_file_command(const std::vector<std::string> &args,
                   const boost::program_options::options_description &options,
                   const char *file_option, std::ostream &out);

/// The common start of every scenario-taking command: adds --help, the scenario flags and the
/// positional scenario file to the command's own `options`, parses `args`, and prints the help
/// (returning nullopt) when asked.
std::optional<boost::program_options::variables_map>
parse_scenario_command(const std::vector<std::string> &args,
                       boost::program_options::options_description &options, std::ostream &out);

/// The most worker threads a command accepts (--threads, -j).
inline constexpr std::int64_t kMaxThreads = 1024;

/// The integer option `name` (declared as std::int64_t, so "-1" is read as -1, not wrapped),
/// refused with one line outside [low, high].
std::int64_t checked_integer(const boost::program_options::variables_map &values,
                             const std::string &name, std::int64_t low, std::int64_t high);

/// The value of option `name`, which must be one of `allowed` (error: field '--name': ...).
std::string checked_choice(const boost::program_options::variables_map &values,
                           const std::string &name, std::initializer_list<const char *> allowed);

/// Runs `work`; a library Error it throws without a field is thrown again located at `file` and
/// the option `field` that gave its input (error: FILE: field '--stages': ...).
template <typename Work>
auto located_at(const std::string &file, const std::string &field, Work &&work) {
  try {
    return work();
  } catch (const Error &error) {
    if (!error.field().empty())
      throw;
    throw Error(file, 0, field, error.sentence());
  }
}

/// Refuses a schedule name of option `option` ("--schedules") that is not registered, naming the
/// option (error: field '--schedules': unknown schedule 'x', did you mean 'y'?).
void check_schedule_option(const std::string &name, const std::string &option);

} // namespace ppsim::cli
