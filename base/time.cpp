#include "base/time.h"

#include "base/decimal.h"

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
  if (!(std::fabs(ticks) < 0x1p62L)) throw std::overflow_error("duration beyond 2^62 ticks");
  return Ticks{static_cast<std::int64_t>(std::llround(ticks))};
}

double TimeScale::to_units(Ticks t) const {
  return static_cast<double>(t.count()) / static_cast<double>(ticks_per_unit);
}

std::string TimeScale::format(Ticks t) const {
  // A fraction n/L is a finite decimal iff L / gcd(n, L) has no prime factors but 2 and 5.
  std::int64_t reduced = ticks_per_unit / std::gcd(t.count(), ticks_per_unit);
  int twos = 0;
  int fives = 0;
  while (reduced % 2 == 0) { reduced /= 2; ++twos; }
  while (reduced % 5 == 0) { reduced /= 5; ++fives; }
  const int digits = std::max(twos, fives);
  if (exact && reduced == 1 && digits <= 15) {
    std::string text = fmt::format("{:.{}f}", to_units(t), digits);
    return text;
  }
  return fmt::format("{:.9g}", to_units(t));
}

std::string TimeScale::readable(Ticks t) const { return format_readable(to_units(t)); }

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
