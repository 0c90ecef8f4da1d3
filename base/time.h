#pragma once
// Exact simulated time (docs/model.md, "Time").
//
// Every duration of a scenario is an exact rational number of the user's time unit. The
// scenario builder picks one scale L (ticks per unit, the LCM of all denominators) so that
// every duration becomes a whole number of ticks; the engine then adds and compares integers
// only, and the oracles of docs/oracles.md hold with ==.
#include <compare>
#include <cstdint>
#include <string>

namespace ppsim {

/// A point or span of simulated time, as a whole number of ticks.
class Ticks {
public:
  constexpr Ticks() = default;
  constexpr explicit Ticks(std::int64_t count) : count_(count) {}

  /// The raw tick count (for arithmetic outside this class, printing and hashing).
  [[nodiscard]] constexpr std::int64_t count() const { return count_; }

  constexpr Ticks &operator+=(Ticks other) {
    count_ += other.count_;
    return *this;
  }
  constexpr Ticks &operator-=(Ticks other) {
    count_ -= other.count_;
    return *this;
  }
  friend constexpr Ticks operator+(Ticks a, Ticks b) { return Ticks{a.count_ + b.count_}; }
  friend constexpr Ticks operator-(Ticks a, Ticks b) { return Ticks{a.count_ - b.count_}; }
  friend constexpr Ticks operator*(std::int64_t k, Ticks a) { return Ticks{k * a.count_}; }
  friend constexpr auto operator<=>(Ticks, Ticks) = default;

private:
  std::int64_t count_ = 0;
};

/// An exact rational number of time units, as parsed from input (numerator / denominator > 0).
struct Rational {
  std::int64_t numerator = 0;
  std::int64_t denominator = 1;

  friend bool operator==(const Rational &, const Rational &) = default;
};

/// The nearest double, for arithmetic that does not need to be exact (ratios, plots, models).
inline double to_double(Rational value) {
  return static_cast<double>(value.numerator) / static_cast<double>(value.denominator);
}

/// Reduces a rational to lowest terms; throws std::overflow_error past 64 bits.
Rational normalized(Rational value);
Rational operator+(Rational a, Rational b);
Rational operator*(Rational a, Rational b);
Rational operator/(Rational a, std::int64_t divisor);
bool operator<(Rational a, Rational b);

/// How ticks map to user time units: `ticks_per_unit` ticks make one unit. When the exact scale
/// would exceed 2^40 ticks per unit, `exact` is false and durations are rounded to the nearest
/// tick of a fixed fine scale (the flagged fallback of docs/model.md, "Time").
struct TimeScale {
  std::int64_t ticks_per_unit = 1;
  bool exact = true;

  /// Converts an exact duration to ticks (rounded to nearest when the scale is inexact).
  [[nodiscard]] Ticks to_ticks(Rational value) const;
  /// The value in user units, for printing and JSON only.
  [[nodiscard]] double to_units(Ticks t) const;
  /// The exact value in user units: what compares times of scenarios with different scales
  /// (chunks split the costs, so each schedule of a comparison may have its own tick).
  [[nodiscard]] Rational exact_units(Ticks t) const { return {t.count(), ticks_per_unit}; }
  /// Every digit of the exact decimal when the value has one (from the integer ticks, never through
  /// a double), else 9 significant digits and never fewer than the integer part.
  [[nodiscard]] std::string format(Ticks t) const;
  /// A JSON number: as format, but 17 significant digits for a value with no finite decimal.
  [[nodiscard]] std::string json(Ticks t) const;
  /// At most 4 significant digits (format_readable), for text reports; JSON and CSV keep format.
  [[nodiscard]] std::string readable(Ticks t) const;
};

/// The scale that makes every given duration a whole number of ticks (docs/model.md, "Time").
TimeScale scale_for(const Rational *values, std::size_t count);

} // namespace ppsim
