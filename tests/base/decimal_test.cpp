// base/decimal: exact parsing of user numbers, byte sizes and bandwidths, and readable printing.
#include "base/decimal.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <optional>

using ppsim::format_bytes;
using ppsim::format_readable;
using ppsim::parse_bandwidth;
using ppsim::parse_byte_size;
using ppsim::parse_rational;
using ppsim::Rational;
using ppsim::rational_from_double;

TEST_CASE("parse_rational reads decimals, exponents and fractions exactly, in lowest terms") {
  CHECK(parse_rational("2") == Rational{2, 1});
  CHECK(parse_rational("0.5") == Rational{1, 2});
  CHECK(parse_rational("-1.25") == Rational{-5, 4});
  CHECK(parse_rational("+3") == Rational{3, 1});
  CHECK(parse_rational("1e-3") == Rational{1, 1000});
  CHECK(parse_rational("2E3") == Rational{2000, 1});
  CHECK(parse_rational("1.5e+1") == Rational{15, 1});
  CHECK(parse_rational("3/4") == Rational{3, 4});
  CHECK(parse_rational("6/8") == Rational{3, 4});
  CHECK(parse_rational("0.5/0.25") == Rational{2, 1});
  CHECK(parse_rational("1/-2") == Rational{-1, 2});
  CHECK(parse_rational(" \t0.75 ") == Rational{3, 4});
  CHECK(parse_rational(".5") == Rational{1, 2});
  CHECK(parse_rational("5.") == Rational{5, 1});
  CHECK(parse_rational("0") == Rational{0, 1});
  CHECK(parse_rational("-0") == Rational{0, 1});
}

TEST_CASE("parse_rational refuses malformed text") {
  for (const char *text : {"", " ", "abc", "-", ".", "1.2.3", "1x", "1e", "1e+", "1e2.5", "e5",
                           "1/0", "1/", "/2", "1/2/3", "0x10", "1 2"}) {
    CAPTURE(text);
    CHECK_FALSE(parse_rational(text).has_value());
  }
}

TEST_CASE("parse_rational keeps 18 significant digits, refuses more and 64-bit overflow") {
  CHECK(parse_rational("123456789012345678") == Rational{123456789012345678, 1});
  CHECK_FALSE(parse_rational("1234567890123456789").has_value());
  // Leading zeros and zeros after the point before the first digit are not significant.
  CHECK(parse_rational("0000000000000000000001") == Rational{1, 1});
  CHECK(parse_rational("0.000000000000000001") == Rational{1, 1000000000000000000});
  CHECK(parse_rational("1e18") == Rational{1000000000000000000, 1});
  CHECK(parse_rational("9e18") == Rational{9000000000000000000, 1});
  CHECK(parse_rational("1e-18") == Rational{1, 1000000000000000000});
  CHECK_FALSE(parse_rational("10e18").has_value()); // 10^19 > 2^63
  CHECK_FALSE(parse_rational("1e19").has_value());
  CHECK_FALSE(parse_rational("1e-19").has_value());
  // Zero with any exponent is still zero.
  CHECK(parse_rational("0e99999") == Rational{0, 1});
  CHECK(parse_rational("0.0e-50") == Rational{0, 1});
  // A fraction whose value overflows 64 bits is refused, not wrapped.
  CHECK_FALSE(parse_rational("123456789012345678/0.000000000000000001").has_value());
}

TEST_CASE("rational_from_double reads the shortest round-trip decimal exactly") {
  CHECK(rational_from_double(0.1) == Rational{1, 10});
  CHECK(rational_from_double(2.5) == Rational{5, 2});
  CHECK(rational_from_double(-0.125) == Rational{-1, 8});
  CHECK(rational_from_double(1e-7) == Rational{1, 10000000});
  CHECK(rational_from_double(3.0) == Rational{3, 1});
  CHECK_FALSE(rational_from_double(std::numeric_limits<double>::infinity()).has_value());
  CHECK_FALSE(rational_from_double(std::numeric_limits<double>::quiet_NaN()).has_value());
  CHECK_FALSE(rational_from_double(1e300).has_value()); // no 64-bit rational holds it
  // 1/3 prints as 16 threes: the rational is that decimal, not 1/3.
  CHECK(rational_from_double(1.0 / 3.0) == Rational{3333333333333333, 10000000000000000});
}

TEST_CASE("parse_byte_size takes binary and decimal prefixes") {
  CHECK(parse_byte_size("123") == 123.0);
  CHECK(parse_byte_size("10B") == 10.0);
  CHECK(parse_byte_size("2KB") == 2000.0);
  CHECK(parse_byte_size("80GB") == 8e10);
  CHECK(parse_byte_size("3MB") == 3e6);
  CHECK(parse_byte_size("1TB") == 1e12);
  CHECK(parse_byte_size("1KiB") == 1024.0);
  CHECK(parse_byte_size("32MiB") == 33554432.0);
  CHECK(parse_byte_size("1.5GiB") == 1610612736.0);
  CHECK(parse_byte_size("2TiB") == 2199023255552.0);
  CHECK(parse_byte_size("3/4KiB") == 768.0);
  CHECK(parse_byte_size(" 1 KiB ") == 1024.0);
  CHECK(parse_byte_size("0") == 0.0);
}

TEST_CASE("parse_byte_size refuses negatives, bare units and unknown units") {
  for (const char *text : {"-1", "-1KB", "GiB", "B", "", "1 kB", "1KIB", "1PB", "one MiB"}) {
    CAPTURE(text);
    CHECK_FALSE(parse_byte_size(text).has_value());
  }
}

TEST_CASE("parse_bandwidth reads bytes and bits per second and inf") {
  CHECK(parse_bandwidth("50GB/s") == 5e10);
  CHECK(parse_bandwidth("400Gb/s") == 5e10);
  CHECK(parse_bandwidth("100Mb/s") == 1.25e7);
  CHECK(parse_bandwidth("8b/s") == 1.0);
  CHECK(parse_bandwidth("1Gib/s") == 134217728.0); // gibibits
  CHECK(parse_bandwidth("1e9") == 1e9);
  CHECK(parse_bandwidth("2GiB/s") == 2147483648.0);
  CHECK(parse_bandwidth(" 1KB ") == 1000.0);
  const auto infinite = parse_bandwidth("inf");
  REQUIRE(infinite.has_value());
  CHECK(std::isinf(*infinite));
  CHECK(*infinite > 0);
}

TEST_CASE("parse_bandwidth refuses zero, negative and malformed rates") {
  for (const char *text : {"0", "0GB/s", "0b/s", "-5GB/s", "-inf", "fast", "", "/s", "b/s"}) {
    CAPTURE(text);
    CHECK_FALSE(parse_bandwidth(text).has_value());
  }
}

TEST_CASE(
    "format_readable prints at most 4 significant digits, never fewer than the integer part") {
  CHECK(format_readable(26.15) == "26.15");
  CHECK(format_readable(33.8) == "33.8");
  CHECK(format_readable(1554) == "1554");
  CHECK(format_readable(0.05) == "0.05");
  CHECK(format_readable(48.43) == "48.43");
  CHECK(format_readable(2.0) == "2");
  CHECK(format_readable(1.23456) == "1.235");
  CHECK(format_readable(123456.7) == "123457");
  CHECK(format_readable(0.000123456) == "0.0001235");
  CHECK(format_readable(-2.5) == "-2.5");
  CHECK(format_readable(0) == "0");
  // Below nine decimals nothing is left: never "-0" nor "0.000000000".
  CHECK(format_readable(1e-12) == "0");
  CHECK(format_readable(-1e-12) == "0");
  CHECK(format_readable(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(format_readable(std::numeric_limits<double>::quiet_NaN()) == "nan");
}

TEST_CASE("format_bytes picks bytes, MiB or GiB by size") {
  CHECK(format_bytes(1562) == "1562 bytes");
  CHECK(format_bytes(0) == "0 bytes");
  CHECK(format_bytes(1048575) == "1048575 bytes");
  CHECK(format_bytes(1048576) == "1 MiB");
  CHECK(format_bytes(48.0 * 1048576) == "48 MiB");
  CHECK(format_bytes(ppsim::kBytesPerGiB - 1048576) == "1023 MiB");
  CHECK(format_bytes(ppsim::kBytesPerGiB) == "1 GiB");
  CHECK(format_bytes(71.25 * ppsim::kBytesPerGiB) == "71.25 GiB");
  CHECK(format_bytes(-2.0 * ppsim::kBytesPerGiB) == "-2 GiB");
}

// BUG (reported, not fixed here: library code is out of this change's scope): parse_decimal
// computes `scale -= exponent` in int, so an exponent of -2147483648 (or -2147483647 after a
// decimal point) overflows a signed int. Plain builds wrap and happen to return nullopt; the
// sanitizer build (scripts/test --sanitize, -fno-sanitize-recover) aborts the whole suite with
// "signed integer overflow: 0 - -2147483648". Skipped until decimal.cpp clamps the exponent.
TEST_CASE("parse_rational refuses exponents at the limits of int without overflowing") {
  CHECK_FALSE(parse_rational("1e-2147483648").has_value());
  CHECK_FALSE(parse_rational("0.5e-2147483647").has_value());
  CHECK_FALSE(parse_rational("1e2147483647").has_value());
  CHECK(parse_rational("0e-2147483648") == Rational{0, 1});
}
