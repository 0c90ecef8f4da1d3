// The injection library: it exports the entry point the CUDA driver calls, and without a driver
// it declines (returns 0) with one line when the driver did not load it, instead of crashing the
// host program.
#include "profiler/driver_probe.h"
#include "profiler/shared_library.h"
#include "tests/profiler/machine.h"

#include <doctest/doctest.h>
#include <optional>

namespace ppsim::profiler {

#ifdef PPSIM_INJECTION_LIBRARY
namespace {

// The library stays loaded, as the driver keeps it.
std::optional<SharedLibrary> open_injection_library() {
  std::string why;
  auto library = SharedLibrary::open(PPSIM_INJECTION_LIBRARY, why, /*keep_loaded=*/true);
  REQUIRE_MESSAGE(library.has_value(), why);
  return library;
}

} // namespace

TEST_CASE("the injection library exports InitializeInjection") {
  const auto library = open_injection_library();
  auto *initialize = reinterpret_cast<int (*)()>(library->symbol("InitializeInjection"));
  REQUIRE(reinterpret_cast<void *>(initialize) != nullptr);
  CHECK(
      library->symbol(
          "_ZN5ppsim8profiler15RangeCorrelator4pushESt17basic_string_viewIcSt11char_traitsIcEE") ==
      nullptr); // internals stay hidden
}

// Called by a program rather than by the driver (from cuInit), the driver is not in the process:
// the library says so in one line and declines before touching CUPTI (which answers only 999
// then, and under LeakSanitizer left a thread that crashed it at exit). Skipped where a driver
// loads: the driver tests of this process load it, and CUPTI is not initialised inside the test
// process.
TEST_CASE("without the driver, the injection library declines" *
          doctest::skip(testing::library_present({"libcuda.so.1"}))) {
  const auto library = open_injection_library();
  auto *initialize = reinterpret_cast<int (*)()>(library->symbol("InitializeInjection"));
  REQUIRE(!driver_loaded());
  CHECK(initialize() == 0);
  CHECK(initialize() == 0); // once per process
}
#endif

} // namespace ppsim::profiler
