// dlopen wrapper: opening, symbols, failures, moves.
#include "profiler/shared_library.h"

#include <doctest/doctest.h>

namespace ppsim::profiler {

TEST_CASE("a system library opens and resolves its symbols") {
  std::string why;
  auto library = SharedLibrary::open("libm.so.6", why);
  REQUIRE(library.has_value());
  CHECK(why.empty());
  CHECK(library->name() == "libm.so.6");
  auto *cosine = reinterpret_cast<double (*)(double)>(library->symbol("cos"));
  REQUIRE(reinterpret_cast<void *>(cosine) != nullptr);
  CHECK(cosine(0.0) == 1.0);
  CHECK(library->symbol("no_such_symbol_in_libm") == nullptr);
}

TEST_CASE("a missing library reports dlopen's reason") {
  std::string why;
  CHECK_FALSE(SharedLibrary::open("/nonexistent/libnothing.so", why).has_value());
  CHECK(why.find("/nonexistent/libnothing.so") != std::string::npos);
}

TEST_CASE("a moved-from library no longer owns the handle") {
  std::string why;
  auto library = SharedLibrary::open("libm.so.6", why);
  REQUIRE(library.has_value());
  SharedLibrary moved = std::move(*library);
  CHECK(moved.symbol("cos") != nullptr);
  CHECK(library->symbol("cos") ==
        nullptr); // NOLINT(bugprone-use-after-move): the point of the test
}

} // namespace ppsim::profiler
