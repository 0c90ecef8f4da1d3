#pragma once
// The scenario flags shared by simulate, compare, bounds, remat and export: a positional
// scenario file, then flags that override its fields (spec model.md 10: flags win).
#include "sim/scenario_builder.h"

#include <boost/program_options.hpp>
#include <string>

namespace ppsim::cli {

/// Adds -p, -m, -v, --schedule, --F/--B/--W, --comm, --K, --memory, ... and --set KEY=VALUE.
void add_scenario_options(boost::program_options::options_description &options);

/// Declares the optional positional SCENARIO.toml argument.
void add_scenario_positional(boost::program_options::options_description &options,
                             boost::program_options::positional_options_description &positional);

/// Reads the scenario file (if any) and applies the flags given on the command line.
ScenarioInput scenario_from_options(const boost::program_options::variables_map &values);

/// Parses `args` with `options` (and the positional scenario), rejecting unknown flags.
boost::program_options::variables_map parse_command(
    const std::vector<std::string> &args, const boost::program_options::options_description &options,
    const boost::program_options::positional_options_description &positional);

} // namespace ppsim::cli
