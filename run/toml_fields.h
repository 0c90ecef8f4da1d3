#pragma once
// TOML-level field setter shared by the readers of run/ (scenario files, sweep files).
#include "run/run_input.h"

#include <string>
#include <string_view>
#include <toml++/toml.h>

namespace ppsim {

/// Sets one dotted field ("pipeline.microbatches") from a TOML value; `where` is recorded as the
/// field's origin for later errors. Throws Error for unknown fields and values of the wrong type.
void set_scenario_field(RunInput &input, const std::string &key, const toml::node &value,
                        const SourceLocation &where);

/// Parses TOML text; a syntax error becomes Error "SOURCE:LINE: malformed TOML: ...".
toml::table parse_toml(std::string_view text, const std::string &source);

} // namespace ppsim
