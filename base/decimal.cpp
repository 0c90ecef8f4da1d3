#include "base/decimal.h"
#include "base/index.h"
#include "base/text_file.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <limits>
#include <stdexcept>
#include <string>

namespace ppsim {
namespace {

bool consume_suffix(std::string_view &text, std::string_view suffix) {
  if (text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix) {
    text.remove_suffix(suffix.size());
    return true;
  }
  return false;
}

// Decimal "[-]digits[.digits][e[-]digits]" read exactly; at most 18 significant digits.
std::optional<Rational> parse_decimal(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  std::int64_t digits = 0;
  int scale = 0; // value = digits * 10^-scale
  int significant = 0;
  bool seen_digit = false;
  bool seen_point = false;
  std::size_t i = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !seen_point) {
      seen_point = true;
    } else if (c >= '0' && c <= '9') {
      seen_digit = true;
      if (digits == 0 && c == '0') {
        if (seen_point)
          ++scale;
        continue;
      }
      if (++significant > 18)
        return std::nullopt;
      digits = digits * 10 + (c - '0');
      if (seen_point)
        ++scale;
    } else {
      break;
    }
  }
  if (!seen_digit)
    return std::nullopt;
  if (i < text.size()) {
    if (text[i] != 'e' && text[i] != 'E')
      return std::nullopt;
    int exponent = 0;
    const auto rest = text.substr(i + 1);
    const char *first = rest.data();
    if (!rest.empty() && rest.front() == '+')
      ++first;
    const auto [end, error] = std::from_chars(first, rest.data() + rest.size(), exponent);
    if (error != std::errc() || end != rest.data() + rest.size())
      return std::nullopt;
    // Far past the +-18 digits kept either way: clamp before subtracting (no int overflow).
    scale -= std::clamp(exponent, -1000, 1000);
  }
  if (scale < -18 || scale > 18) {
    if (digits == 0)
      return Rational{0, 1};
    return std::nullopt;
  }
  std::int64_t power = 1;
  for (int k = 0; k < std::abs(scale); ++k)
    power *= 10;
  Rational value{negative ? -digits : digits, 1};
  try {
    if (scale >= 0)
      return normalized({value.numerator, power});
    if (std::abs(digits) > std::numeric_limits<std::int64_t>::max() / power)
      return std::nullopt;
    return Rational{value.numerator * power, 1};
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

struct Unit {
  std::string_view suffix;
  double factor;
};

} // namespace

std::optional<Rational> parse_rational(std::string_view text) {
  text = trim(text);
  const auto slash = text.find('/');
  if (slash == std::string_view::npos)
    return parse_decimal(text);
  const auto numerator = parse_decimal(text.substr(0, slash));
  const auto denominator = parse_decimal(text.substr(slash + 1));
  if (!numerator || !denominator || denominator->numerator == 0)
    return std::nullopt;
  try {
    return *numerator * Rational{denominator->denominator, denominator->numerator};
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

std::optional<Rational> rational_from_double(double value) {
  if (!std::isfinite(value))
    return std::nullopt;
  std::array<char, 64> buffer{};
  const auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  if (error != std::errc())
    return std::nullopt;
  return parse_decimal(std::string_view(buffer.data(), at(end - buffer.data())));
}

std::optional<double> parse_byte_size(std::string_view text) {
  text = trim(text);
  static constexpr std::array<Unit, 9> units{{{"KiB", 1024.0},
                                              {"MiB", 1024.0 * 1024},
                                              {"GiB", 1024.0 * 1024 * 1024},
                                              {"TiB", 1024.0 * 1024 * 1024 * 1024},
                                              {"KB", 1e3},
                                              {"MB", 1e6},
                                              {"GB", 1e9},
                                              {"TB", 1e12},
                                              {"B", 1.0}}};
  double factor = 1.0;
  for (const Unit &unit : units) {
    if (consume_suffix(text, unit.suffix)) {
      factor = unit.factor;
      break;
    }
  }
  const auto number = parse_rational(text);
  if (!number || number->numerator < 0)
    return std::nullopt;
  return to_double(*number) * factor;
}

std::optional<double> parse_bandwidth(std::string_view text) {
  text = trim(text);
  if (text == "inf")
    return std::numeric_limits<double>::infinity();
  double factor = 1.0;
  if (consume_suffix(text, "b/s")) {
    factor = 1.0 / 8; // bits
    const auto bytes = parse_byte_size(std::string(text) + "B");
    if (!bytes || *bytes <= 0)
      return std::nullopt;
    return *bytes * factor;
  }
  consume_suffix(text, "/s");
  const auto bytes = parse_byte_size(text);
  if (!bytes || *bytes <= 0)
    return std::nullopt;
  return *bytes;
}

std::string format_readable(double value) {
  if (!std::isfinite(value))
    return fmt::format("{}", value);
  if (value == 0)
    return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const int decimals = std::clamp(3 - magnitude, 0, 9);
  std::string text = fmt::format("{:.{}f}", value, decimals);
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.')
      text.pop_back();
  }
  return text == "-0" ? "0" : text;
}

std::string format_bytes(double bytes) {
  constexpr double kMiB = 1024.0 * 1024;
  if (std::fabs(bytes) >= kBytesPerGiB)
    return format_readable(bytes / kBytesPerGiB) + " GiB";
  if (std::fabs(bytes) >= kMiB)
    return format_readable(bytes / kMiB) + " MiB";
  return format_readable(bytes) + " bytes";
}

} // namespace ppsim
