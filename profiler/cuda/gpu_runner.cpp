// The GPU workload module's entry point (spec profiler.md 3): CUPTI before the first CUDA call,
// one arena allocation, warm-up then repetitions of F, B, W, R_full, R_sel and BW per layer, each
// phase wrapped in an external correlation id and an NVTX range; medians of the busy union go
// into rows that keep the analytic FLOPs and bytes.
#include "profiler/collector.h"
#include "profiler/cost_model.h"
#include "profiler/cuda/gpu_block.h"
#include "profiler/cupti_loader.h"
#include "profiler/gpu_profile.h"
#include "profiler/stats.h"
#include "sim/error.h"

#include <fmt/format.h>
#include <nvtx3/nvToolsExt.h>

namespace ppsim::profiler::gpu {
namespace {

constexpr Pass kSequence[] = {
    Pass::forward,        Pass::backward_input,      Pass::backward_weight,
    Pass::recompute_full, Pass::recompute_selective, Pass::backward_total};

// Pushes the phase's external id (CUPTI) and NVTX range; pops both on destruction.
class PhaseScope {
public:
  PhaseScope(const CuptiApi &api, PhaseId phase) : api_(api) {
    check_cupti(
        api_.activity_push_external_correlation_id(kPpsimCorrelationKind, pack_phase_id(phase)),
        "cuptiActivityPushExternalCorrelationId");
    nvtxRangePushA(nvtx_range_name(phase).c_str());
  }
  ~PhaseScope() {
    nvtxRangePop();
    std::uint64_t popped = 0;
    api_.activity_pop_external_correlation_id(kPpsimCorrelationKind, &popped);
  }
  PhaseScope(const PhaseScope &) = delete;
  PhaseScope &operator=(const PhaseScope &) = delete;

private:
  const CuptiApi &api_;
};

CostFile measure(const GpuProfileRequest &request) {
  CuptiLibrary cupti = load_cupti(cupti_candidates(request.cupti_path));
  ActivityCollector collector(cupti.api);
  collector.start(); // before the first CUDA call (spec 2.2)
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
  std::vector<std::string> warnings = cupti.warnings;
  {
    const BlockShape &shape = request.shape;
    if (shape.kind != BlockKind::gpt || shape.tp != 1) {
      throw Error("the GPU workload measures the gpt block with --tp 1 only; use --analytic for "
                  "other layouts");
    }
    const GpuBlockShape sizes{static_cast<int>(shape.batch), static_cast<int>(shape.seq),
                              static_cast<int>(shape.hidden), static_cast<int>(shape.heads),
                              static_cast<int>(ffn_of(shape))};
    GpuBlock block(sizes, arena, base, handle, stream);
    const int total = request.warmup + request.reps;
    for (int rep = 0; rep < total; ++rep) {
      for (int layer = 0; layer < request.layers; ++layer) {
        for (const Pass pass : kSequence) {
          const PhaseId phase{pass, static_cast<std::uint16_t>(layer), 0,
                              static_cast<std::uint16_t>(rep)};
          {
            PhaseScope scope(cupti.api, phase);
            block.run(static_cast<GpuPass>(static_cast<int>(pass)));
          }
          if (request.mode == "isolated")
            check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        }
      }
    }
    check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); // CUPTI's flush does not sync
    const std::uint64_t analytic_stash = activation_bytes([&] {
                                           BlockShape no_dropout = request.shape;
                                           no_dropout.dropout =
                                               false; // the workload has no dropout
                                           return no_dropout;
                                         }())
                                             .full;
    const double measured = static_cast<double>(block.stash_bytes());
    if (std::abs(measured - static_cast<double>(analytic_stash)) >
        0.01 * static_cast<double>(analytic_stash)) {
      warnings.push_back(fmt::format("measured stash {} bytes differs from the analytic {} bytes",
                                     block.stash_bytes(), analytic_stash));
    }
  }
  collector.stop();
  cudaFree(base);
  cublasLtDestroy(handle);
  cudaStreamDestroy(stream);
  const DecodedActivity activity = collector.take();
  const Attribution attribution = attribute(activity);
  CostFile file = analytic_cost_file(request.shape, request.layers, request.device);
  apply_measurements(file.rows, summarize_passes(attribution.phases, request.warmup), "cupti");
  CostMetadata &m = file.metadata;
  m.device = properties.name;
  m.sm_count = properties.multiProcessorCount;
  m.clock_khz = clock_khz;
  m.driver = driver;
  m.cuda_runtime = runtime;
  m.cupti_api_version = cupti.runtime_version;
  m.dropout = false;
  m.timer = "cupti";
  m.mode = request.mode;
  m.warmup = request.warmup;
  m.reps = request.reps;
  m.dropped_records = static_cast<std::int64_t>(activity.dropped_records);
  m.unattributed_kernel_ms = static_cast<double>(attribution.unattributed_busy_ns) / 1e6;
  m.warnings = warnings;
  for (std::string &warning : measurement_warnings(activity, attribution, file.rows)) {
    m.warnings.push_back(std::move(warning));
  }
  return file;
}

} // namespace
} // namespace ppsim::profiler::gpu

/// The module's entry point (see profiler/gpu_profile.h).
extern "C" __attribute__((visibility("default"))) int
ppsim_run_gpu_profile(const ppsim::profiler::GpuProfileRequest &request, std::string &cost_json,
                      std::string &error) {
  try {
    cost_json = ppsim::write_cost_json(ppsim::profiler::gpu::measure(request));
    return 0;
  } catch (const std::exception &failure) {
    error = failure.what();
    return 1;
  }
}
