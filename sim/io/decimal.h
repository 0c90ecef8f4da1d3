#pragma once
// Exact parsing of the numbers users write: decimals as exact rationals (spec model.md 7),
// byte sizes ("1.5GiB") and bandwidths ("50GB/s"). Returns nullopt on malformed text; callers
// turn that into an Error naming file, line and field.
#include "sim/time.h"

#include <optional>
#include <string_view>

namespace ppsim {

/// "2", "0.5", "-1.25", "1e-3", "3/4" -> exact rational; nullopt if malformed or out of range.
std::optional<Rational> parse_rational(std::string_view text);

/// A rational from a double that came from a parser without exact text (TOML floats):
/// the shortest decimal that round-trips the double, read exactly.
std::optional<Rational> rational_from_double(double value);

/// "123", "1.5GiB", "32MiB", "80GB", "2KB" -> bytes (binary and decimal prefixes).
std::optional<double> parse_byte_size(std::string_view text);

/// "50GB/s", "400Gb/s" (bits), "1e9" (bytes per second) -> bytes per second; "inf" -> +inf.
std::optional<double> parse_bandwidth(std::string_view text);

} // namespace ppsim
