// Activity collector against a fake CuptiApi table (docs/profiler.md, "Testing without a GPU"): the
// fake stores the two buffer callbacks; buffers are requested and completed from another thread, as
// CUPTI does.
#include "profiler/collector.h"

#include "activity_fixtures.h"
#include "base/error.h"
#include "profiler/decoder.h"

#include <algorithm>
#include <cstring>
#include <doctest/doctest.h>
#include <thread>

namespace ppsim::profiler {
namespace {

// CUPTI is a C API without user data: the fake's state is necessarily global.
struct FakeCupti {
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  std::vector<CUpti_ActivityKind> enabled;
  CUptiResult enable_result = CUPTI_SUCCESS;
  CUpti_ActivityKind failing_kind = CUPTI_ACTIVITY_KIND_INVALID;
  std::size_t dropped = 0;
  int flushes = 0;
  CUptiResult register_result = CUPTI_SUCCESS;
  CUptiResult flush_result = CUPTI_SUCCESS;
  testing::ActivityBuffer pending; // what the next flush delivers
};
FakeCupti fake;

CUptiResult fake_register(CUpti_BuffersCallbackRequestFunc request,
                          CUpti_BuffersCallbackCompleteFunc complete) {
  if (fake.register_result != CUPTI_SUCCESS)
    return fake.register_result;
  fake.request = request;
  fake.complete = complete;
  return CUPTI_SUCCESS;
}
CUptiResult fake_enable(CUpti_ActivityKind kind) {
  if (kind == fake.failing_kind)
    return fake.enable_result;
  fake.enabled.push_back(kind);
  return CUPTI_SUCCESS;
}
CUptiResult fake_disable(CUpti_ActivityKind kind) {
  std::erase(fake.enabled, kind);
  return CUPTI_SUCCESS;
}
// Like CUPTI, a flush asks for a buffer, fills it and completes it on a CUPTI-owned thread.
CUptiResult fake_flush(std::uint32_t flags) {
  CHECK(flags == CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  ++fake.flushes;
  if (fake.flush_result != CUPTI_SUCCESS)
    return fake.flush_result;
  if (fake.pending.size() == 0)
    return CUPTI_SUCCESS;
  std::thread worker([] {
    std::uint8_t *buffer = nullptr;
    std::size_t size = 0;
    std::size_t max_records = 1;
    fake.request(&buffer, &size, &max_records);
    REQUIRE(buffer != nullptr);
    CHECK(reinterpret_cast<std::uintptr_t>(buffer) % 8 == 0);
    REQUIRE(size >= fake.pending.size());
    std::memcpy(buffer, fake.pending.data(), fake.pending.size());
    fake.complete(nullptr, 0, buffer, size, fake.pending.size());
  });
  worker.join();
  fake.pending = {};
  return CUPTI_SUCCESS;
}
CUptiResult fake_dropped(CUcontext, std::uint32_t, std::size_t *dropped) {
  *dropped = fake.dropped;
  return CUPTI_SUCCESS;
}

CuptiApi fake_api() {
  fake = FakeCupti{};
  CuptiApi api;
  api.activity_register_callbacks = &fake_register;
  api.activity_enable = &fake_enable;
  api.activity_disable = &fake_disable;
  api.activity_flush_all = &fake_flush;
  api.activity_get_next_record = &next_record_by_size;
  api.activity_get_num_dropped_records = &fake_dropped;
  return api;
}

} // namespace

TEST_CASE("start enables the kinds attribution needs, never the serialising KERNEL kind") {
  const CuptiApi api = fake_api();
  ActivityCollector collector(api);
  collector.start();
  const bool registered = fake.request != nullptr && fake.complete != nullptr;
  CHECK(registered);
  CHECK(fake.enabled == collector.kinds());
  const auto has = [&](CUpti_ActivityKind kind) {
    return std::find(fake.enabled.begin(), fake.enabled.end(), kind) != fake.enabled.end();
  };
  CHECK(has(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  CHECK(has(CUPTI_ACTIVITY_KIND_RUNTIME));
  CHECK(has(CUPTI_ACTIVITY_KIND_DRIVER));
  CHECK(has(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
  CHECK_FALSE(has(CUPTI_ACTIVITY_KIND_KERNEL));
  CHECK_FALSE(has(CUPTI_ACTIVITY_KIND_MEMORY2));
  collector.stop();
  CHECK(fake.enabled.empty());
}

TEST_CASE("memory records are enabled on request") {
  const CuptiApi api = fake_api();
  ActivityCollector collector(api, CollectorOptions{1 << 16, 2, true, {}});
  collector.start();
  CHECK(std::find(fake.enabled.begin(), fake.enabled.end(), CUPTI_ACTIVITY_KIND_MEMORY2) !=
        fake.enabled.end());
  collector.stop();
}

TEST_CASE("flushed buffers are decoded, dropped records counted, buffers reused") {
  const CuptiApi api = fake_api();
  ActivityCollector collector(api, CollectorOptions{1 << 16, 1, false, {}});
  collector.start();
  fake.dropped = 3;
  fake.pending.link(5, 99).kernel(5, 10, 20, "k1");
  collector.flush();
  fake.pending.kernel(6, 30, 45, "k2");
  collector.flush();
  DecodedActivity decoded = collector.take();
  CHECK(decoded.gpu.size() == 2);
  CHECK(decoded.links.size() == 1);
  CHECK(decoded.dropped_records == 6);
  CHECK(decoded.names.text(decoded.gpu[1].name_id) == "k2");
  CHECK(collector.overflow_buffers() == 0); // the one pooled buffer was reused
  CHECK(collector.take().gpu.empty());      // take() moves out
  collector.stop();
  CHECK(fake.flushes == 3);
}

TEST_CASE("CUPTI errors while enabling become one sentence and leave nothing enabled") {
  const CuptiApi api = fake_api();
  fake.failing_kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  fake.enable_result = CUPTI_ERROR_UNKNOWN; // what CUPTI 13.0 answers without a driver
  ActivityCollector collector(api);
  CHECK_THROWS_WITH_AS(collector.start(),
                       "cuptiActivityEnable: CUPTI failed with an unknown error (often: no CUDA "
                       "driver or device) (CUPTI error 999)",
                       Error);
  CHECK(fake.enabled.empty());
  fake.enable_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  CHECK_THROWS_WITH_AS(collector.start(),
                       "cuptiActivityEnable: another CUPTI client is attached (nsys, ncu, "
                       "cuda-gdb, or a profiler in the program); use --timer=cuda-events or the "
                       "nsys importer (CUPTI error 39)",
                       Error);
}

TEST_CASE("only one collector is active at a time") {
  const CuptiApi api = fake_api();
  ActivityCollector first(api);
  ActivityCollector second(api);
  first.start();
  CHECK_THROWS_WITH_AS(second.start(),
                       "another activity collector is already active in this process", Error);
  first.stop();
  CHECK_NOTHROW(second.start());
  second.stop();
}

TEST_CASE(
    "a collector left running by an error path disables its kinds and flushes when destroyed") {
  const CuptiApi api = fake_api();
  const std::size_t buffers_before = ActivityCollector::live_buffers();
  std::size_t kernels_decoded = 0;
  {
    CollectorOptions options;
    options.buffer_bytes = 1 << 16;
    options.on_decoded = [&](DecodedActivity &batch) { kernels_decoded += batch.gpu.size(); };
    ActivityCollector collector(api, options);
    collector.start();
    REQUIRE_FALSE(fake.enabled.empty());
    fake.pending.kernel(1, 100, 200, "k"); // CUPTI still holds a record
  }                                        // no stop(): an exception unwound past it
  CHECK(fake.enabled.empty());
  CHECK(fake.flushes == 1);
  // The flushed buffer was decoded and came back to the collector, which freed it.
  CHECK(kernels_decoded == 1);
  CHECK(ActivityCollector::live_buffers() == buffers_before);
  // Callbacks after the collector ended do not assert: a request gets no buffer, a completion
  // of a buffer CUPTI kept is ignored.
  std::uint8_t *buffer = reinterpret_cast<std::uint8_t *>(0x1);
  std::size_t size = 1, max_records = 1;
  fake.request(&buffer, &size, &max_records);
  CHECK(buffer == nullptr);
  CHECK(size == 0);
  CHECK_NOTHROW(fake.complete(nullptr, 0, nullptr, 0, 0));
  // A stopped collector is not flushed again by its destructor.
  {
    ActivityCollector collector(api);
    collector.start();
    collector.stop();
    CHECK(fake.flushes == 2);
  }
  CHECK(fake.flushes == 2);
}

TEST_CASE("a buffer CUPTI has not completed is not freed with the collector") {
  const CuptiApi api = fake_api();
  const std::size_t buffers_before = ActivityCollector::live_buffers();
  std::uint8_t *held = nullptr;
  {
    ActivityCollector collector(api);
    collector.start();
    std::size_t size = 0, max_records = 0;
    fake.request(&held, &size, &max_records); // CUPTI takes a buffer and keeps it
    REQUIRE(held != nullptr);
    collector.stop();
  }
  // Still writable (ASan would report a use after free), then returned by hand.
  CHECK(ActivityCollector::live_buffers() == buffers_before + 1);
  held[0] = 1;
  ::operator delete[](held, std::align_val_t{8});
}

TEST_CASE("on_decoded folds each buffer as it completes, and may drop it") {
  const CuptiApi api = fake_api();
  CollectorOptions options{1 << 16, 1, false, {}};
  std::size_t kernels_seen = 0;
  options.on_decoded = [&](DecodedActivity &batch) {
    kernels_seen += batch.gpu.size();
    batch = DecodedActivity{};
  };
  ActivityCollector collector(api, options);
  collector.start();
  fake.pending.kernel(5, 10, 20, "k1");
  collector.flush();
  fake.pending.kernel(6, 30, 45, "k2").kernel(7, 50, 60, "k3");
  collector.flush();
  collector.stop();
  CHECK(kernels_seen == 3);
  CHECK(collector.take().gpu.empty()); // nothing kept
}

TEST_CASE(
    "a failing callback registration throws, enables nothing and leaves no collector active") {
  const CuptiApi api = fake_api();
  fake.register_result = CUPTI_ERROR_UNKNOWN;
  ActivityCollector collector(api);
  CHECK_THROWS_WITH_AS(
      collector.start(),
      "cuptiActivityRegisterCallbacks: CUPTI failed with an unknown error (often: no CUDA "
      "driver or device) (CUPTI error 999)",
      Error);
  CHECK(fake.enabled.empty());
  // Not left as the active collector: another one starts.
  fake.register_result = CUPTI_SUCCESS;
  ActivityCollector other(api);
  CHECK_NOTHROW(other.start());
  other.stop();
  CHECK(fake.flushes == 1); // the failed collector's destructor flushed nothing
}

TEST_CASE("a flush that fails in stop(): kinds disabled, the collector detached, then the error") {
  const CuptiApi api = fake_api();
  const std::size_t buffers_before = ActivityCollector::live_buffers();
  {
    ActivityCollector collector(api, CollectorOptions{1 << 16, 1, false, {}});
    collector.start();
    fake.flush_result = CUPTI_ERROR_UNKNOWN;
    CHECK_THROWS_WITH_AS(
        collector.stop(),
        "cuptiActivityFlushAll: CUPTI failed with an unknown error (often: no CUDA driver or "
        "device) (CUPTI error 999)",
        Error);
    CHECK(fake.enabled.empty());
    CHECK(fake.flushes == 1);
    // Detached: a late callback gets no buffer, and another collector may start.
    std::uint8_t *buffer = reinterpret_cast<std::uint8_t *>(0x1);
    std::size_t size = 1, max_records = 1;
    fake.request(&buffer, &size, &max_records);
    CHECK(buffer == nullptr);
    fake.flush_result = CUPTI_SUCCESS;
    ActivityCollector other(api);
    CHECK_NOTHROW(other.start());
    other.stop();
  }
  CHECK(fake.flushes == 2); // the stopped collector's destructor does not flush again
  CHECK(ActivityCollector::live_buffers() == buffers_before);
}

TEST_CASE("an exception from on_decoded: no terminate, the buffer returned, the error at stop()") {
  const CuptiApi api = fake_api();
  const std::size_t buffers_before = ActivityCollector::live_buffers();
  bool fail = true;
  {
    CollectorOptions options{1 << 16, 1, false, {}};
    options.on_decoded = [&](DecodedActivity &batch) {
      if (fail)
        throw Error("folding the buffer failed");
      batch = DecodedActivity{};
    };
    ActivityCollector collector(api, options);
    collector.start();
    // Completed on another thread, as CUPTI does: an exception escaping there would terminate.
    fake.pending.kernel(5, 10, 20, "k1");
    CHECK_THROWS_WITH_AS(collector.flush(), "folding the buffer failed", Error);
    // The buffer came back: the next one reuses it (a pool of one, no overflow).
    fail = false;
    fake.pending.kernel(6, 30, 45, "k2");
    CHECK_NOTHROW(collector.flush());
    CHECK(collector.overflow_buffers() == 0);
    // A failure seen during stop()'s flush is thrown after the kinds are disabled.
    fail = true;
    fake.pending.kernel(7, 50, 60, "k3");
    CHECK_THROWS_WITH_AS(collector.stop(), "folding the buffer failed", Error);
    CHECK(fake.enabled.empty());
    CHECK(collector.overflow_buffers() == 0);
  }
  CHECK(ActivityCollector::live_buffers() == buffers_before);
}

} // namespace ppsim::profiler
