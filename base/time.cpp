#include "base/time.h"
#include "base/index.h"

#include "base/decimal.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <stdexcept>

namespace ppsim {
namespace {

// 128-bit intermediates keep 64-bit rational arithmetic exact until the final range check.
__extension__ using Int128 = __int128;

constexpr std::int64_t kExactScaleLimit = std::int64_t{1} << 40;
// Fallback scale when the exact one would overflow: 2^40 ticks per unit keeps ~12 significant
// digits for durations up to ~8e6 units and leaves headroom for sums in int64.
constexpr std::int64_t kFallbackScale = std::int64_t{1} << 40;

std::int64_t checked(Int128 value) {
  if (value > INT64_MAX || value < INT64_MIN) {
    throw std::overflow_error("rational arithmetic overflows 64 bits");
  }
  return static_cast<std::int64_t>(value);
}

} // namespace

Rational normalized(Rational value) {
  if (value.denominator == 0) {
    throw std::invalid_argument("zero denominator");
  }
  if (value.denominator < 0) {
    value.numerator = -value.numerator;
    value.denominator = -value.denominator;
  }
  const std::int64_t divisor = std::gcd(value.numerator, value.denominator);
  if (divisor > 1) {
    value.numerator /= divisor;
    value.denominator /= divisor;
  }
  return value;
}

Rational operator+(Rational a, Rational b) {
  const std::int64_t lcm = std::lcm(a.denominator, b.denominator);
  return normalized({checked(Int128{a.numerator} * (lcm / a.denominator) +
                             Int128{b.numerator} * (lcm / b.denominator)),
                     lcm});
}

Rational operator*(Rational a, Rational b) {
  a = normalized(a);
  b = normalized(b);
  const std::int64_t g1 = std::gcd(a.numerator, b.denominator);
  const std::int64_t g2 = std::gcd(b.numerator, a.denominator);
  const std::int64_t d1 = g1 == 0 ? 1 : g1;
  const std::int64_t d2 = g2 == 0 ? 1 : g2;
  return normalized({checked(Int128{a.numerator / d1} * (b.numerator / d2)),
                     checked(Int128{a.denominator / d2} * (b.denominator / d1))});
}

Rational operator/(Rational a, std::int64_t divisor) {
  return normalized({a.numerator, checked(Int128{a.denominator} * divisor)});
}

bool operator<(Rational a, Rational b) {
  return Int128{a.numerator} * b.denominator < Int128{b.numerator} * a.denominator;
}

Ticks TimeScale::to_ticks(Rational value) const {
  value = normalized(value);
  if (exact) {
    return Ticks{checked(Int128{value.numerator} * (ticks_per_unit / value.denominator))};
  }
  const long double units =
      static_cast<long double>(value.numerator) / static_cast<long double>(value.denominator);
  const long double ticks = units * ticks_per_unit;
  if (!(std::fabs(ticks) < 0x1p62L))
    throw std::overflow_error("duration beyond 2^62 ticks");
  return Ticks{static_cast<std::int64_t>(std::llround(ticks))};
}

double TimeScale::to_units(Ticks t) const {
  return static_cast<double>(t.count()) / static_cast<double>(ticks_per_unit);
}

namespace {

constexpr std::int64_t kDoubleExact = std::int64_t{1} << 53;
__extension__ using UInt128 = unsigned __int128;

// The exact value t / scale as a decimal, rounded half away from zero to `decimals` places.
// Integer arithmetic only, so values past 2^53 ticks print exactly (docs/model.md, "Time").
std::string round_decimal(std::int64_t ticks, std::int64_t scale, int decimals) {
  const bool negative = ticks < 0;
  const UInt128 magnitude =
      negative ? static_cast<UInt128>(-Int128{ticks}) : static_cast<UInt128>(ticks);
  const auto unit = static_cast<UInt128>(scale);
  auto whole = static_cast<std::uint64_t>(magnitude / unit);
  UInt128 rest = magnitude % unit;
  std::string fraction;
  for (int i = 0; i < decimals; ++i) {
    rest *= 10;
    fraction += static_cast<char>('0' + static_cast<int>(rest / unit));
    rest %= unit;
  }
  if (rest * 2 >= unit) { // round half away from zero, carrying through the fraction
    int i = decimals - 1;
    for (; i >= 0 && fraction[at(i)] == '9'; --i)
      fraction[at(i)] = '0';
    if (i >= 0) {
      ++fraction[at(i)];
    } else {
      ++whole;
    }
  }
  std::string text = fmt::format("{}{}", negative ? "-" : "", whole);
  if (decimals > 0)
    text += "." + fraction;
  return text;
}

// floor(log10(|t / scale|)) for t != 0, exactly.
int decimal_magnitude(std::int64_t ticks, std::int64_t scale) {
  const UInt128 magnitude =
      ticks < 0 ? static_cast<UInt128>(-Int128{ticks}) : static_cast<UInt128>(ticks);
  const auto unit = static_cast<UInt128>(scale);
  if (magnitude >= unit) {
    int digits = 0;
    for (UInt128 whole = magnitude / unit; whole >= 10; whole /= 10)
      ++digits;
    return digits;
  }
  int zeros = 0;
  for (UInt128 rest = magnitude; rest < unit; rest *= 10)
    --zeros;
  return zeros;
}

std::string strip_zeros(std::string text) {
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.')
      text.pop_back();
  }
  return text == "-0" ? "0" : text;
}

// `significant` digits, never fewer than the integer part, no exponent, no trailing zeros.
std::string round_significant(std::int64_t ticks, std::int64_t scale, int significant) {
  if (ticks == 0)
    return "0";
  const int decimals = std::max(0, significant - 1 - decimal_magnitude(ticks, scale));
  return strip_zeros(round_decimal(ticks, scale, decimals));
}

// The number of decimals of t / scale when it is a finite decimal (scale / gcd(t, scale) has no
// prime factors but 2 and 5), else -1.
int finite_decimals(std::int64_t ticks, std::int64_t scale) {
  std::int64_t reduced = scale / std::gcd(ticks, scale);
  int twos = 0;
  int fives = 0;
  while (reduced % 2 == 0) {
    reduced /= 2;
    ++twos;
  }
  while (reduced % 5 == 0) {
    reduced /= 5;
    ++fives;
  }
  return reduced == 1 ? std::max(twos, fives) : -1;
}

bool beyond_double(Ticks t) { return t.count() > kDoubleExact || t.count() < -kDoubleExact; }

} // namespace

std::string TimeScale::format(Ticks t) const {
  // Exact values print every digit of their decimal (at most 40 below the point, as the scale is
  // at most 2^40), from the integer ticks: never through a double.
  if (exact) {
    const int decimals = finite_decimals(t.count(), ticks_per_unit);
    if (decimals >= 0)
      return round_decimal(t.count(), ticks_per_unit, decimals);
    return round_significant(t.count(), ticks_per_unit, 9);
  }
  return fmt::format("{:.9g}", to_units(t));
}

std::string TimeScale::json(Ticks t) const {
  if (exact) {
    const int decimals = finite_decimals(t.count(), ticks_per_unit);
    if (decimals >= 0)
      return round_decimal(t.count(), ticks_per_unit, decimals);
    if (beyond_double(t))
      return round_significant(t.count(), ticks_per_unit, 17);
  }
  return fmt::format("{}", to_units(t));
}

std::string TimeScale::readable(Ticks t) const {
  // Below 2^53 ticks the double's integer part is exact; past it, round the exact value the same
  // way format_readable does (4 significant digits, never fewer than the integer part).
  if (!beyond_double(t))
    return format_readable(to_units(t));
  const int decimals = std::clamp(3 - decimal_magnitude(t.count(), ticks_per_unit), 0, 9);
  return strip_zeros(round_decimal(t.count(), ticks_per_unit, decimals));
}

TimeScale scale_for(const Rational *values, std::size_t count) {
  std::int64_t scale = 1;
  for (std::size_t i = 0; i < count; ++i) {
    const Rational value = normalized(values[i]);
    const Int128 next = Int128{scale} / std::gcd(scale, value.denominator) * value.denominator;
    if (next > kExactScaleLimit) {
      return TimeScale{kFallbackScale, false};
    }
    scale = static_cast<std::int64_t>(next);
  }
  return TimeScale{scale, true};
}

} // namespace ppsim
