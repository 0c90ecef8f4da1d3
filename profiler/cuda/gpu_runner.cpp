// The GPU workload module's entry point (docs/profiler.md, "How measurement works"): CUPTI (with
// the cupti timer) before the first CUDA call, one arena allocation, warm-up then repetitions of F,
// B, W, R_full, R_sel and BW per layer in the order of the mode (run_plan.h), each phase wrapped in
// an NVTX range and, per timer, an external correlation id or a CUDA event pair; medians over
// repetitions go into rows that keep the analytic FLOPs and bytes.
#include "base/error.h"
#include "base/index.h"
#include "profiler/collector.h"
#include "profiler/cost_model.h"
#include "profiler/cuda/gpu_block.h"
#include "profiler/cupti_loader.h"
#include "profiler/event_dump.h"
#include "profiler/gpu_profile.h"
#include "profiler/run_plan.h"
#include "profiler/stats.h"

#include <fmt/format.h>
#include <nvtx3/nvToolsExt.h>

#include <map>
#include <memory>
#include <optional>

namespace ppsim::profiler::gpu {
namespace {

// Pushes the phase's NVTX range and, when CUPTI collects, its external id; pops both on
// destruction.
class PhaseScope {
public:
  PhaseScope(const CuptiApi *api, PhaseId phase) : api_(api) {
    if (api_ != nullptr) {
      check_cupti(
          api_->activity_push_external_correlation_id(kPpsimCorrelationKind, pack_phase_id(phase)),
          "cuptiActivityPushExternalCorrelationId");
    }
    nvtxRangePushA(nvtx_range_name(phase).c_str());
  }
  ~PhaseScope() {
    nvtxRangePop();
    if (api_ != nullptr) {
      std::uint64_t popped = 0;
      api_->activity_pop_external_correlation_id(kPpsimCorrelationKind, &popped);
    }
  }
  PhaseScope(const PhaseScope &) = delete;
  PhaseScope &operator=(const PhaseScope &) = delete;

private:
  const CuptiApi *api_;
};

// One CUDA event pair per phase of a repetition, recorded on the stream and read once the
// repetition's last synchronisation has passed (the cuda-events timer).
class EventPairs {
public:
  explicit EventPairs(std::size_t phases) : events_(2 * phases) {
    for (cudaEvent_t &event : events_)
      check_cuda(cudaEventCreate(&event), "cudaEventCreate");
  }
  ~EventPairs() {
    for (cudaEvent_t event : events_)
      cudaEventDestroy(event);
  }
  EventPairs(const EventPairs &) = delete;
  EventPairs &operator=(const EventPairs &) = delete;

  void record_start(std::size_t phase, cudaStream_t stream) {
    check_cuda(cudaEventRecord(events_[2 * phase], stream), "cudaEventRecord");
  }
  void record_end(std::size_t phase, cudaStream_t stream) {
    check_cuda(cudaEventRecord(events_[2 * phase + 1], stream), "cudaEventRecord");
  }
  [[nodiscard]] float elapsed_ms(std::size_t phase) const {
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, events_[2 * phase], events_[2 * phase + 1]),
               "cudaEventElapsedTime");
    return ms;
  }

private:
  std::vector<cudaEvent_t> events_;
};

GpuMeasurement measure(const GpuProfileRequest &request) {
  check_measurable(request.shape); // before CUPTI and before any allocation
  const bool use_cupti = request.timer == PhaseTimer::cupti;
  std::optional<CuptiLibrary> cupti;
  std::optional<ActivityCollector> collector;
  if (use_cupti) {
    cupti.emplace(load_cupti(cupti_candidates(request.cupti_path)));
    CollectorOptions options;
    options.memory_records = true; // to check that no timed phase allocates (the arena's promise)
    collector.emplace(cupti->api, options);
    collector->start(); // before the first CUDA call (docs/profiler.md)
  }
  cudaDeviceProp properties{};
  check_cuda(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  cublasLtHandle_t handle = nullptr;
  check_cublas(cublasLtCreate(&handle), "cublasLtCreate");
  std::size_t free_bytes = 0, total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  const std::size_t capacity = free_bytes / 10 * 8; // leave room for cuBLASLt and the context
  char *base = nullptr;
  check_cuda(cudaMalloc(&base, capacity), "cudaMalloc");
  Arena arena(capacity);
  std::vector<std::string> warnings = cupti ? cupti->warnings : std::vector<std::string>{};
  std::vector<EventTiming> event_timings;
  // The workload runs no dropout: its analytic rows and its measured stash describe that block.
  BlockShape workload_shape = request.shape;
  workload_shape.dropout = false;
  std::uint64_t measured_stash = 0;
  std::map<Pass, PhaseBytes> arena_bytes;
  {
    const BlockShape &shape = request.shape;
    const GpuBlockShape sizes{static_cast<int>(shape.batch), static_cast<int>(shape.seq),
                              static_cast<int>(shape.hidden), static_cast<int>(shape.heads),
                              static_cast<int>(ffn_of(shape))};
    std::vector<std::unique_ptr<GpuBlock>> blocks;
    for (int b = 0; b < blocks_needed(request.mode, request.layers); ++b)
      blocks.push_back(std::make_unique<GpuBlock>(sizes, arena, base, handle, stream));
    const std::vector<PhaseStep> steps = phase_order(request.mode, request.layers);
    std::optional<EventPairs> events;
    if (!use_cupti)
      events.emplace(steps.size());
    const auto phase_of = [](const PhaseStep &step, int rep) {
      return PhaseId{step.pass, step.layer, 0, static_cast<std::uint16_t>(rep)};
    };
    const int total = request.warmup + request.reps;
    for (int rep = 0; rep < total; ++rep) {
      for (std::size_t k = 0; k < steps.size(); ++k) {
        {
          // The arena's counters in the first timed repetition: each pass's transient workspace.
          std::optional<PhaseMeter> meter;
          if (rep == request.warmup)
            meter.emplace(arena);
          PhaseScope scope(cupti ? &cupti->api : nullptr, phase_of(steps[k], rep));
          if (events)
            events->record_start(k, stream);
          blocks[at(block_index(request.mode, steps[k]))]->run(
              static_cast<GpuPass>(static_cast<int>(steps[k].pass)));
          if (events)
            events->record_end(k, stream);
          if (meter) {
            PhaseBytes &largest = arena_bytes[steps[k].pass];
            largest.peak_temp_bytes =
                std::max(largest.peak_temp_bytes, meter->finish().peak_temp_bytes);
          }
        }
        if (synchronizes_each_phase(request.mode))
          check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      }
      check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize"); // one repetition done
      for (std::size_t k = 0; events && k < steps.size(); ++k)
        event_timings.push_back({phase_of(steps[k], rep), events->elapsed_ms(k)});
    }
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); // CUPTI's flush does not sync
    measured_stash = blocks.front()->stash_bytes();
    // The rows carry the measured stash; the warning carries both (scripts/gpu-check greps it).
    if (std::string warning = stash_warning(measured_stash, activation_bytes(workload_shape).full);
        !warning.empty())
      warnings.push_back(std::move(warning));
  }
  DecodedActivity activity;
  Attribution attribution;
  if (collector) {
    collector->stop();
    activity = collector->take();
    attribution = attribute(activity);
    if (std::string warning = allocations_warning(attribution.allocations_in_phases);
        !warning.empty())
      warnings.push_back(std::move(warning));
  } else {
    attribution.phases = phase_metrics_from_events(event_timings);
  }
  cudaFree(base);
  cublasLtDestroy(handle);
  cudaStreamDestroy(stream);
  CostFile file = analytic_cost_file(workload_shape, request.layers, request.device);
  for (CostRow &row : file.rows)
    row.activation_bytes_full = static_cast<double>(measured_stash);
  apply_arena_peaks(file.rows, arena_bytes);
  apply_measurements(file.rows, summarize_passes(attribution.phases, request.warmup),
                     use_cupti ? "cupti" : "cuda_events");
  CostMetadata &m = file.metadata;
  m.device = properties.name;
  m.sm_count = properties.multiProcessorCount;
  m.clock_khz = clock_khz;
  m.driver = driver;
  m.cuda_runtime = runtime;
  m.cupti_api_version = cupti ? cupti->runtime_version : 0;
  m.dropout = false;
  m.timer = phase_timer_name(request.timer);
  m.mode = run_mode_name(request.mode);
  m.warmup = request.warmup;
  m.reps = request.reps;
  m.dropped_records = static_cast<std::int64_t>(activity.dropped_records);
  m.unattributed_kernel_ms = static_cast<double>(attribution.unattributed_busy_ns) / 1e6;
  m.warnings = warnings;
  for (std::string &warning : measurement_warnings(activity, attribution, file.rows)) {
    m.warnings.push_back(std::move(warning));
  }
  GpuMeasurement measurement{std::move(file), {}};
  if (request.keep_events && collector)
    measurement.events_ndjson = write_events_ndjson(activity);
  return measurement;
}

} // namespace
} // namespace ppsim::profiler::gpu

/// The module's entry point (see profiler/gpu_profile.h).
extern "C" __attribute__((visibility("default"))) int
ppsim_run_gpu_profile(const ppsim::profiler::GpuProfileRequest &request, std::string &cost_json,
                      std::string &events_ndjson, std::string &error) {
  try {
    auto measurement = ppsim::profiler::gpu::measure(request);
    cost_json = ppsim::write_cost_json(measurement.costs);
    events_ndjson = std::move(measurement.events_ndjson);
    return 0;
  } catch (const std::exception &failure) {
    error = failure.what();
    return 1;
  }
}
