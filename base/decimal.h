#pragma once
// Exact parsing of the numbers users write: decimals as exact rationals (docs/model.md, "Time"),
// byte sizes ("1.5GiB") and bandwidths ("50GB/s"). Returns nullopt on malformed text; callers
// turn that into an Error naming file, line and field. Also the readable forms text reports
// print (exact values stay in JSON and CSV).
#include "base/time.h"

#include <optional>
#include <string>
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

/// At most 4 significant digits, never fewer than the integer part, no exponent and no trailing
/// zeros: 26.15, 33.8, 1554, 0.05, 48.43.
std::string format_readable(double value);

inline constexpr double kBytesPerGiB = 1024.0 * 1024 * 1024;

/// Bytes, readable, in the unit their size calls for: "1562 bytes", "48 MiB", "71.25 GiB".
std::string format_bytes(double bytes);

} // namespace ppsim
