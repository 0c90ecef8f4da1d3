#include "profiler/collector.h"

#include "base/assert.h"
#include "base/error.h"
#include "profiler/decoder.h"

#include <algorithm>
#include <atomic>
#include <new>
#include <thread>
#include <utility>

namespace ppsim::profiler {
namespace {

// CUPTI's callbacks have no user-data argument: the active collector is found here. A callback
// counts itself in `callbacks_running` before it looks, so a collector that clears the pointer
// and then waits for the count to drop cannot be destroyed under a callback.
std::atomic<ActivityCollector *> active_collector{nullptr};
std::atomic<int> callbacks_running{0};

struct RunningCallback {
  RunningCallback() { ++callbacks_running; }
  ~RunningCallback() { --callbacks_running; }
  RunningCallback(const RunningCallback &) = delete;
  RunningCallback &operator=(const RunningCallback &) = delete;
};

constexpr std::align_val_t kBufferAlignment{8}; // CUPTI requires 8-byte aligned buffers

std::atomic<std::size_t> live_buffer_count{0};

} // namespace

void ActivityCollector::AlignedDelete::operator()(std::uint8_t *buffer) const {
  ::operator delete[](buffer, kBufferAlignment);
  --live_buffer_count;
}

std::size_t ActivityCollector::live_buffers() { return live_buffer_count.load(); }

ActivityCollector::ActivityCollector(const CuptiApi &api, CollectorOptions options)
    : api_(api), options_(options) {}

ActivityCollector::~ActivityCollector() {
  // Left running by an error path: turn the kinds off and collect what CUPTI still holds before
  // the callbacks lose their collector (a callback without one would assert inside CUPTI's
  // thread). Errors are ignored here; stop() reports them on the normal path.
  if (!enabled_.empty()) {
    for (const CUpti_ActivityKind kind : enabled_)
      api_.activity_disable(kind);
    enabled_.clear();
    api_.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  detach();
  // A buffer CUPTI has not completed may still be written: never free it under CUPTI.
  const std::lock_guard lock(mutex_);
  for (Buffer &buffer : lent_buffers_)
    static_cast<void>(buffer.release());
}

std::vector<CUpti_ActivityKind> ActivityCollector::kinds() const {
  // RUNTIME and DRIVER both: external correlation only fires for launches with an API record,
  // and cuBLASLt may launch through either (docs/profiler.md).
  std::vector<CUpti_ActivityKind> kinds{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                        CUPTI_ACTIVITY_KIND_MEMCPY,
                                        CUPTI_ACTIVITY_KIND_MEMSET,
                                        CUPTI_ACTIVITY_KIND_RUNTIME,
                                        CUPTI_ACTIVITY_KIND_DRIVER,
                                        CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                        CUPTI_ACTIVITY_KIND_OVERHEAD};
  if (options_.memory_records) {
    kinds.push_back(CUPTI_ACTIVITY_KIND_MEMORY2);
    kinds.push_back(CUPTI_ACTIVITY_KIND_MEMORY_POOL);
  }
  return kinds;
}

void ActivityCollector::start() {
  ActivityCollector *expected = nullptr;
  if (!active_collector.compare_exchange_strong(expected, this) && expected != this) {
    throw Error("another activity collector is already active in this process");
  }
  try {
    check_cupti(api_.activity_register_callbacks(&on_request, &on_complete),
                "cuptiActivityRegisterCallbacks");
    for (const CUpti_ActivityKind kind : kinds()) {
      check_cupti(api_.activity_enable(kind), "cuptiActivityEnable");
      enabled_.push_back(kind);
    }
  } catch (...) {
    for (const CUpti_ActivityKind kind : enabled_)
      api_.activity_disable(kind);
    enabled_.clear();
    active_collector.store(nullptr);
    throw;
  }
}

void ActivityCollector::flush() {
  check_cupti(api_.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  rethrow_callback_error();
}

void ActivityCollector::stop() {
  for (const CUpti_ActivityKind kind : enabled_)
    api_.activity_disable(kind);
  enabled_.clear();
  const CUptiResult flushed = api_.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  // Detached whatever the flush said: a later callback finds no collector and is ignored.
  detach();
  check_cupti(flushed, "cuptiActivityFlushAll");
  rethrow_callback_error();
}

void ActivityCollector::note_callback_error(std::exception_ptr error) {
  const std::lock_guard lock(mutex_);
  if (!callback_error_)
    callback_error_ = std::move(error);
}

void ActivityCollector::rethrow_callback_error() {
  std::exception_ptr error;
  {
    const std::lock_guard lock(mutex_);
    error = std::exchange(callback_error_, nullptr);
  }
  if (error)
    std::rethrow_exception(error);
}

void ActivityCollector::detach() {
  ActivityCollector *self = this;
  active_collector.compare_exchange_strong(self, nullptr);
  // A callback that found this collector before the pointer was cleared may still run.
  while (callbacks_running.load() != 0)
    std::this_thread::yield();
}

DecodedActivity ActivityCollector::take() {
  const std::lock_guard lock(mutex_);
  DecodedActivity taken = std::move(decoded_);
  decoded_ = DecodedActivity{};
  return taken;
}

std::size_t ActivityCollector::overflow_buffers() const {
  const std::lock_guard lock(mutex_);
  return overflow_;
}

std::uint8_t *ActivityCollector::acquire_buffer() {
  const std::lock_guard lock(mutex_);
  Buffer buffer;
  if (!free_buffers_.empty()) {
    buffer = std::move(free_buffers_.back());
    free_buffers_.pop_back();
  } else {
    // Never hand CUPTI a null buffer (it can crash before API version 27); past the pool bound
    // allocate anyway and count it.
    buffer.reset(
        static_cast<std::uint8_t *>(::operator new[](options_.buffer_bytes, kBufferAlignment)));
    ++live_buffer_count;
    if (++allocated_ > options_.pool_buffers)
      ++overflow_;
  }
  std::uint8_t *raw = buffer.get();
  lent_buffers_.push_back(std::move(buffer));
  return raw;
}

void ActivityCollector::complete_buffer(CUcontext context, std::uint32_t stream_id,
                                        std::uint8_t *buffer, std::size_t valid_size) {
  const std::lock_guard lock(mutex_);
  try {
    if (buffer != nullptr && valid_size > 0) {
      decode_buffer(buffer, valid_size, api_.activity_get_next_record, decoded_);
    }
    std::size_t dropped = 0;
    if (api_.activity_get_num_dropped_records(context, stream_id, &dropped) == CUPTI_SUCCESS) {
      decoded_.dropped_records += dropped;
    }
    if (options_.on_decoded)
      options_.on_decoded(decoded_);
  } catch (...) {
    // On CUPTI's thread an exception would terminate the program: kept for flush() or stop(),
    // and the buffer is returned all the same.
    if (!callback_error_)
      callback_error_ = std::current_exception();
  }
  const auto lent =
      std::find_if(lent_buffers_.begin(), lent_buffers_.end(),
                   [&](const Buffer &candidate) { return candidate.get() == buffer; });
  PPSIM_ASSERT(lent != lent_buffers_.end());
  if (free_buffers_.size() < options_.pool_buffers)
    free_buffers_.push_back(std::move(*lent));
  lent_buffers_.erase(lent);
}

void CUPTIAPI ActivityCollector::on_request(std::uint8_t **buffer, std::size_t *size,
                                            std::size_t *max_records) {
  const RunningCallback running;
  ActivityCollector *self = active_collector.load();
  if (self == nullptr) { // no collector any more: CUPTI (API >= 27) drops the records
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;
    return;
  }
  try {
    *buffer = self->acquire_buffer();
    *size = self->options_.buffer_bytes;
  } catch (...) { // out of memory: CUPTI drops the records; the caller hears at flush()
    self->note_callback_error(std::current_exception());
    *buffer = nullptr;
    *size = 0;
  }
  *max_records = 0; // as many as fit
}

void CUPTIAPI ActivityCollector::on_complete(CUcontext context, std::uint32_t stream_id,
                                             std::uint8_t *buffer, std::size_t /*size*/,
                                             std::size_t valid_size) {
  const RunningCallback running;
  ActivityCollector *self = active_collector.load();
  if (self == nullptr)
    return; // completed after its collector ended: the buffer was left to CUPTI
  try {
    self->complete_buffer(context, stream_id, buffer, valid_size);
  } catch (...) { // a buffer that was never lent (an internal error): never across CUPTI's frames
    self->note_callback_error(std::current_exception());
  }
}

} // namespace ppsim::profiler
