// String interning for names CUPTI owns.
#include "profiler/activity.h"

#include <doctest/doctest.h>

namespace ppsim::profiler {

TEST_CASE("interning returns one id per distinct text and keeps a copy") {
  StringTable table;
  std::string name = "gemm";
  const std::uint32_t gemm = table.intern(name);
  name = "other";
  CHECK(table.intern("gemm") == gemm);
  CHECK(table.intern("softmax") != gemm);
  CHECK(table.text(gemm) == "gemm");
  CHECK(table.size() == 2);
}

} // namespace ppsim::profiler
