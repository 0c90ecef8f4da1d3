#pragma once
// The message of the one user error type, for tests that assert the full text of an error, one
// input or a table of them.
#include "base/error.h"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

namespace ppsim::testing {

/// What `action` throws as ppsim::Error ("file:line: field 'f': sentence"), or "no error" when it
/// returns.
template <typename Action> std::string error_message(Action &&action) {
  try {
    std::forward<Action>(action)();
  } catch (const ppsim::Error &error) {
    return error.what();
  }
  return "no error";
}

/// An input and the whole message reading it must throw.
struct ErrorCase {
  std::string input;
  std::string message;
};

/// Checks, case by case, that `read(input)` throws ppsim::Error with exactly `message`.
template <typename Read> void check_errors(Read &&read, const std::vector<ErrorCase> &cases) {
  for (const ErrorCase &error_case : cases) {
    CAPTURE(error_case.input);
    CHECK(error_message([&] { read(error_case.input); }) == error_case.message);
  }
}

} // namespace ppsim::testing
