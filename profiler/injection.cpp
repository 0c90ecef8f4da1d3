// The CUDA injection library (docs/profiler.md, "Modules", issue 6): loaded into any CUDA program
// with
//   CUDA_INJECTION64_PATH=libppsim_cupti_inject.so NVTX_INJECTION64_PATH=libcupti.so.13 <program>
// it collects kernels through CUPTI's Activity API, turns NVTX ranges named layer/pass/microbatch
// ("3/B/0", or "L03.B.mb0") into external correlation ids, and at exit writes the per-layer times
// (medians over the ranges' repetitions) to $PPSIM_COSTS_OUT (default ppsim_costs.csv; .json for
// JSON), one file per launcher rank (costs.rank3.csv, or "{rank}" in the name). Memory stays
// bounded: each buffer is attributed as it completes, and only the first $PPSIM_MAX_REPETITIONS
// (default 100) ranges of each layer, pass and microbatch are measured. $PPSIM_WARMUP repetitions
// of each phase are discarded (default 0). Only the layers and passes some range measured are
// written; bytes and FLOPs are absent: merge with `ppsim profile
// --analytic` rows for those.
#include "base/error.h"
#include "costs/cost_file.h"
#include "profiler/collector.h"
#include "profiler/decoder.h"
#include "profiler/driver_probe.h"
#include "profiler/range_correlator.h"
#include "profiler/stats.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <generated_nvtx_meta.h>
#include <memory>
#include <mutex>
#include <string>

namespace ppsim::profiler {
namespace {

CuptiApi linked_api() {
  CuptiApi api;
  api.get_version = &cuptiGetVersion;
  api.get_timestamp = &cuptiGetTimestamp;
  api.activity_register_callbacks = &cuptiActivityRegisterCallbacks;
  api.activity_enable = &cuptiActivityEnable;
  api.activity_disable = &cuptiActivityDisable;
  api.activity_flush_all = &cuptiActivityFlushAll;
  api.activity_get_next_record = &cuptiActivityGetNextRecord;
  api.activity_get_num_dropped_records = &cuptiActivityGetNumDroppedRecords;
  api.activity_push_external_correlation_id = &cuptiActivityPushExternalCorrelationId;
  api.activity_pop_external_correlation_id = &cuptiActivityPopExternalCorrelationId;
  return api;
}

// Bounds on what a long run keeps: the repetitions measured per (layer, pass, microbatch)
// ($PPSIM_MAX_REPETITIONS, default 100) and the kernels waiting for a link in a later buffer.
constexpr std::uint16_t kDefaultMaxRepetitions = 100;
constexpr std::size_t kMaxPendingActivity = std::size_t{1} << 20;

std::uint16_t max_repetitions() {
  const char *text = std::getenv("PPSIM_MAX_REPETITIONS");
  const long value = text != nullptr ? std::strtol(text, nullptr, 10) : 0;
  return value > 0 && value <= UINT16_MAX ? static_cast<std::uint16_t>(value)
                                          : kDefaultMaxRepetitions;
}

struct Injection {
  CuptiApi api = linked_api();
  std::unique_ptr<ActivityCollector> collector;
  CUpti_SubscriberHandle subscriber = nullptr;
  // Each decoded buffer is folded here and dropped (under the collector's lock).
  IncrementalAttribution attribution{kMaxPendingActivity};
  DecodedActivity counters; ///< what the warnings need: dropped and truncated records
  std::uint16_t repetitions = max_repetitions();
};
Injection *injection = nullptr; // the driver loads an injection library once per process

RangeCorrelator &thread_correlator() {
  thread_local RangeCorrelator correlator(injection != nullptr ? injection->repetitions
                                                               : kDefaultMaxRepetitions);
  return correlator;
}

void fold(Injection &state, DecodedActivity &batch) {
  state.attribution.add(batch);
  state.counters.dropped_records += batch.dropped_records;
  state.counters.truncated_buffers += batch.truncated_buffers;
  state.counters.records += batch.records;
  batch = DecodedActivity{};
}

const char *pushed_name(CUpti_CallbackId id, const void *params) {
  switch (id) {
  case CUPTI_CBID_NVTX_nvtxRangePushA:
    return static_cast<const nvtxRangePushA_params *>(params)->message;
  case CUPTI_CBID_NVTX_nvtxRangePushEx: {
    const nvtxEventAttributes_t *attributes =
        static_cast<const nvtxRangePushEx_params *>(params)->eventAttrib;
    return attributes != nullptr && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII
               ? attributes->message.ascii
               : "";
  }
  case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
    const nvtxEventAttributes_t *attributes =
        static_cast<const nvtxDomainRangePushEx_params *>(params)->core.eventAttrib;
    return attributes != nullptr && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII
               ? attributes->message.ascii
               : "";
  }
  default:
    return nullptr;
  }
}

void CUPTIAPI on_nvtx(void *, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void *data) {
  if (domain != CUPTI_CB_DOMAIN_NVTX || injection == nullptr)
    return;
  const auto *nvtx = static_cast<const CUpti_NvtxData *>(data);
  if (const char *name = pushed_name(id, nvtx->functionParams)) {
    if (const auto external = thread_correlator().push(name)) {
      injection->api.activity_push_external_correlation_id(kPpsimCorrelationKind, *external);
    }
  } else if (id == CUPTI_CBID_NVTX_nvtxRangePop || id == CUPTI_CBID_NVTX_nvtxDomainRangePop) {
    if (thread_correlator().pop()) {
      std::uint64_t popped = 0;
      injection->api.activity_pop_external_correlation_id(kPpsimCorrelationKind, &popped);
    }
  }
}

void write_costs() {
  if (injection == nullptr)
    return;
  try {
    injection->collector->stop(); // flushes every buffer, folded as it completes
    const char *warmup_text = std::getenv("PPSIM_WARMUP");
    const CostFile file = injection_cost_file(injection->attribution.finish(), injection->counters,
                                              warmup_text != nullptr ? std::atoi(warmup_text) : 0);
    if (file.rows.empty()) {
      std::fprintf(stderr, "ppsim inject: no NVTX range named layer/pass/microbatch was seen; "
                           "nothing written (is NVTX_INJECTION64_PATH set to libcupti?)\n");
      return;
    }
    // One file per rank (all ranks of a job share the variable): join them with `ppsim profile
    // merge`.
    const char *path_text = std::getenv("PPSIM_COSTS_OUT");
    const std::string path =
        rank_cost_path(path_text != nullptr ? path_text : "ppsim_costs.csv",
                       launcher_rank([](const char *name) { return std::getenv(name); }));
    const bool json = path.size() >= 5 && path.substr(path.size() - 5) == ".json";
    const std::string temporary = path + ".tmp";
    {
      std::ofstream out(temporary, std::ios::trunc);
      out << (json ? write_cost_json(file) : write_cost_csv(file));
      if (!out)
        throw Error(path, 0, "", "cannot write the cost file");
    }
    std::filesystem::rename(temporary, path);
    std::fprintf(stderr, "ppsim inject: wrote %zu layers to %s\n", file.rows.size(), path.c_str());
    // A CSV file has no metadata: its warnings (a layer without a pass, dropped records) go here.
    std::fputs(warning_lines(file, "ppsim inject").c_str(), stderr);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "ppsim inject: %s\n", error.what());
  }
}

} // namespace
} // namespace ppsim::profiler

/// Called by the CUDA driver when CUDA_INJECTION64_PATH names this library; 1 = success.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  namespace profiler = ppsim::profiler;
  static std::once_flag once;
  static int result = 0;
  std::call_once(once, [] {
    // The CUDA driver calls this from inside cuInit, so the driver is already in the process;
    // probing it (cuInit again) here made the program's first CUDA call fail. Called any other
    // way (a test, a program without CUDA), it declines before touching CUPTI, which answers
    // only "unknown error" without a driver and may leave threads half set up.
    if (!profiler::driver_loaded()) {
      std::fprintf(stderr, "ppsim inject: the CUDA driver (libcuda.so.1) is not loaded in this "
                           "process; not profiling\n");
      return;
    }
    auto state = std::make_unique<profiler::Injection>();
    try {
      // CUPTI's documented order: subscribe to the callbacks, then enable the activity kinds.
      profiler::check_cupti(cuptiSubscribe(&state->subscriber, &profiler::on_nvtx, nullptr),
                            "cuptiSubscribe");
      profiler::check_cupti(cuptiEnableDomain(1, state->subscriber, CUPTI_CB_DOMAIN_NVTX),
                            "cuptiEnableDomain");
      profiler::CollectorOptions options;
      options.memory_records = true; // activation bytes of programs that allocate their tensors
      options.on_decoded = [raw = state.get()](profiler::DecodedActivity &batch) {
        profiler::fold(*raw, batch);
      };
      state->collector = std::make_unique<profiler::ActivityCollector>(state->api, options);
      state->collector->start();
    } catch (const std::exception &error) {
      std::fprintf(stderr, "ppsim inject: %s\n", error.what());
      state->collector.reset(); // disables what it enabled
      if (state->subscriber != nullptr)
        cuptiUnsubscribe(state->subscriber);
      return;
    }
    profiler::injection = state.release();
    std::atexit(&profiler::write_costs);
    result = 1;
  });
  return result;
}
