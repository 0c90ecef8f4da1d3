#pragma once
// The message of the one user error type, for tests that assert the full text of an error.
#include "base/error.h"

#include <string>
#include <utility>

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

} // namespace ppsim::testing
