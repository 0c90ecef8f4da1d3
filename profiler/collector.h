#pragma once
// The CUPTI activity collector (docs/profiler.md, "Modules" and "How measurement works"): hands
// CUPTI buffers from a bounded pool, decodes completed buffers (copying the strings CUPTI owns),
// counts dropped records, and enables the activity kinds attribution needs. CUPTI's buffer
// callbacks carry no user pointer, so one collector at a time is active in a process (CUPTI's
// activity state is per process too).
#include "profiler/activity.h"
#include "profiler/cupti_api.h"

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace ppsim::profiler {

/// Buffer sizes and the optional kinds.
struct CollectorOptions {
  std::size_t buffer_bytes = 8u << 20; ///< 4-8 MiB per CUPTI's guidance
  std::size_t pool_buffers = 16;       ///< buffers kept for reuse; more are allocated if needed
  bool memory_records = false;         ///< MEMORY2 and MEMORY_POOL (allocations in phases)
  /// Called (on CUPTI's thread, under the collector's lock) after each buffer is decoded, with
  /// everything decoded and not yet taken; it may consume and clear it, so that a long run keeps
  /// bounded memory (the injection library folds it into an IncrementalAttribution). An
  /// exception from it (or from decoding) never crosses CUPTI's C frames: the buffer is still
  /// returned, and the first such exception is rethrown by the next flush() or stop().
  std::function<void(DecodedActivity &)> on_decoded;
};

/// Collects activity through a CuptiApi table (the real libcupti or a test fake).
class ActivityCollector {
public:
  explicit ActivityCollector(const CuptiApi &api, CollectorOptions options = {});
  /// Disables the kinds and flushes when stop() was not reached (an error path), and leaves
  /// to CUPTI any buffer it has not completed; callbacks after that are ignored.
  ~ActivityCollector();
  ActivityCollector(const ActivityCollector &) = delete;
  ActivityCollector &operator=(const ActivityCollector &) = delete;

  /// Registers the buffer callbacks and enables the kinds; throws Error with CUPTI's sentence.
  void start();
  /// Forces CUPTI to complete every buffer (call after cudaDeviceSynchronize()); throws Error
  /// with CUPTI's sentence, or what a buffer callback threw.
  void flush();
  /// Disables the kinds, flushes and detaches from CUPTI's callbacks, even when the flush fails
  /// (then it throws afterwards, as flush() does); the collector can be started again.
  void stop();
  /// Moves out what was decoded so far.
  DecodedActivity take();

  /// The kinds start() enables, in order (never KERNEL, which serialises kernels).
  [[nodiscard]] std::vector<CUpti_ActivityKind> kinds() const;
  /// Buffers allocated beyond the pool bound (a hint to raise it or flush more often).
  [[nodiscard]] std::size_t overflow_buffers() const;
  /// Activity buffers allocated and not freed in this process, by every collector, those left to
  /// CUPTI included (for tests: a buffer a collector got back is freed with it).
  [[nodiscard]] static std::size_t live_buffers();

private:
  static void CUPTIAPI on_request(std::uint8_t **buffer, std::size_t *size,
                                  std::size_t *max_records);
  static void CUPTIAPI on_complete(CUcontext context, std::uint32_t stream_id, std::uint8_t *buffer,
                                   std::size_t size, std::size_t valid_size);
  /// Stops being the active collector and waits for callbacks already inside it.
  void detach();
  std::uint8_t *acquire_buffer();
  void complete_buffer(CUcontext context, std::uint32_t stream_id, std::uint8_t *buffer,
                       std::size_t valid_size);
  /// Keeps the first exception of a callback for the caller's thread; rethrows it there.
  void note_callback_error(std::exception_ptr error);
  void rethrow_callback_error();

  struct AlignedDelete {
    void operator()(std::uint8_t *buffer) const;
  };
  using Buffer = std::unique_ptr<std::uint8_t, AlignedDelete>;

  const CuptiApi &api_;
  CollectorOptions options_;
  mutable std::mutex mutex_;
  std::vector<Buffer> free_buffers_;
  std::vector<Buffer> lent_buffers_;
  std::size_t allocated_ = 0;
  std::size_t overflow_ = 0;
  std::vector<CUpti_ActivityKind> enabled_;
  DecodedActivity decoded_;
  std::exception_ptr callback_error_;
};

} // namespace ppsim::profiler
