// Workload arena: alignment, first fit, coalescing, exhaustion, per-phase kept and peak bytes.
#include "profiler/arena.h"

#include "base/assert.h"
#include "base/error.h"

#include <doctest/doctest.h>

namespace ppsim::profiler {

TEST_CASE("blocks are aligned, packed first fit and reused after coalescing") {
  Arena arena(4096, 256);
  const std::size_t a = arena.allocate(100);
  const std::size_t b = arena.allocate(256);
  const std::size_t c = arena.allocate(257);
  CHECK(a == 0);
  CHECK(b == 256);
  CHECK(c == 512);
  CHECK(arena.live_bytes() == 256 + 256 + 512);
  arena.release(a);
  arena.release(b); // coalesces with a's block: 512 free bytes at 0
  CHECK(arena.allocate(512) == 0);
  arena.release(c);
  CHECK(arena.live_bytes() == 512);
  CHECK(arena.peak_bytes() == 1024);
}

TEST_CASE("exhaustion is a user error naming the sizes") {
  Arena arena(1024, 256);
  arena.allocate(768);
  CHECK_THROWS_WITH_AS(arena.allocate(512),
                       "the workload arena of 1024 bytes cannot hold 512 more bytes (768 live); "
                       "reduce --batch or --seq",
                       Error);
  CHECK_THROWS_AS(arena.release(12345), InternalError);
}

TEST_CASE("a phase reports the bytes it keeps and its transient peak") {
  Arena arena(1 << 20, 256);
  const std::size_t weights = arena.allocate(4096);
  std::size_t stash = 0;
  {
    PhaseMeter forward(arena); // F: keeps a stash, uses a workspace
    stash = arena.allocate(8192);
    const std::size_t workspace = arena.allocate(2048);
    arena.release(workspace);
    const PhaseBytes bytes = forward.finish();
    CHECK(bytes.kept_bytes == 8192);
    CHECK(bytes.peak_temp_bytes == 2048);
  }
  {
    PhaseMeter backward(arena); // B: frees the stash, keeps W's inputs
    const std::size_t for_weights = arena.allocate(1024);
    arena.release(stash);
    const PhaseBytes bytes = backward.finish();
    CHECK(bytes.kept_bytes == 1024 - 8192);
    CHECK(bytes.peak_temp_bytes == 8192); // stash and W inputs were live together
    arena.release(for_weights);
  }
  CHECK(arena.live_bytes() == 4096);
  arena.release(weights);
}

} // namespace ppsim::profiler
