#pragma once
// Scenario files (docs/scenario.md) and single-field overrides. One mechanism sets a field from
// a TOML value, whether it comes from a scenario file, a command-line flag or a sweep axis
// (the TOML-level entry point is in toml_fields.h, for readers inside io/).
#include "run/run_input.h"

#include <string>
#include <string_view>
#include <vector>

namespace ppsim {

/// Parses scenario TOML text; `source` names it in errors ("quickstart.toml:12: field ...").
/// Relative paths inside (costs_file, schedule_file) are resolved against `base_directory`.
RunInput parse_scenario(std::string_view text, const std::string &source,
                             const std::string &base_directory = "");

/// Reads and parses a scenario file.
RunInput read_scenario_file(const std::string &path);

/// Sets one field from text as a user typed it ("8", "0.5", "1/6", "80GiB", "[1, 2]", "zb-h1"):
/// read as a TOML value when it is one, else as a string.
void set_scenario_field_from_text(RunInput &input, const std::string &key,
                                  const std::string &text, const SourceLocation &where);

/// Every settable dotted field name (for suggestions and documentation).
std::vector<std::string> scenario_field_names();

} // namespace ppsim
