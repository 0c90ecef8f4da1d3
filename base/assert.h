#pragma once
// Internal invariants (never user input): on in every build with PPSIM_CHECKS, and a failure
// throws InternalError, which the CLI reports with exit code 2.
#include <stdexcept>
#include <string>

namespace ppsim {

/// A broken internal invariant: a bug in ppsim, not in the user's input.
class InternalError : public std::logic_error {
public:
  using std::logic_error::logic_error;
};

[[noreturn]] void fail_invariant(const char *condition, const char *file, int line);

} // namespace ppsim

#if PPSIM_CHECKS
#define PPSIM_ASSERT(condition)                                                                    \
  do {                                                                                             \
    if (!(condition))                                                                              \
      ::ppsim::fail_invariant(#condition, __FILE__, __LINE__);                                     \
  } while (false)
#else
#define PPSIM_ASSERT(condition) ((void)0)
#endif
