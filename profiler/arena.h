#pragma once
// The workload's memory arena (docs/profiler.md, "Modules" and "How measurement works"): one device
// allocation made before any timed phase, carved into blocks by first fit, so no cudaMalloc happens
// inside a phase and the bytes each pass keeps or needs transiently are known exactly. Offsets
// only: the arena never touches the memory, so its bookkeeping is tested on the host.
#include <cstddef>
#include <cstdint>
#include <map>

namespace ppsim::profiler {

/// First-fit allocator over [0, capacity) with coalescing frees and live/peak accounting.
class Arena {
public:
  /// `alignment` is a power of two (256 suits cuBLASLt and vectorised kernels).
  explicit Arena(std::size_t capacity_bytes, std::size_t alignment = 256);

  /// The offset of a new block of `bytes` (rounded up to the alignment); throws Error when the
  /// arena cannot hold it.
  std::size_t allocate(std::size_t bytes);
  /// Frees a block returned by allocate(); freeing anything else is an internal error.
  void release(std::size_t offset);

  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  [[nodiscard]] std::size_t live_bytes() const { return live_; }
  [[nodiscard]] std::size_t peak_bytes() const { return peak_; }
  /// Starts a new peak window at the current live bytes (call at the start of a phase).
  void reset_peak() { peak_ = live_; }

private:
  std::size_t capacity_;
  std::size_t alignment_;
  std::size_t live_ = 0;
  std::size_t peak_ = 0;
  std::map<std::size_t, std::size_t> free_; ///< offset -> size, coalesced
  std::map<std::size_t, std::size_t> used_; ///< offset -> size
};

/// What one phase did to the arena.
struct PhaseBytes {
  std::int64_t kept_bytes = 0;     ///< live after - live before (negative when it frees a stash)
  std::size_t peak_temp_bytes = 0; ///< peak during the phase - live after: transient workspace
};

/// Measures a phase: construct before it, call finish() after it.
class PhaseMeter {
public:
  explicit PhaseMeter(Arena &arena) : arena_(arena), live_before_(arena.live_bytes()) {
    arena.reset_peak();
  }
  [[nodiscard]] PhaseBytes finish() const;

private:
  Arena &arena_;
  std::size_t live_before_;
};

} // namespace ppsim::profiler
