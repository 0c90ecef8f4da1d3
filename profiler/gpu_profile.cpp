#include "profiler/gpu_profile.h"

#include "base/error.h"
#include "profiler/shared_library.h"

#include <fmt/format.h>

#include <cmath>

namespace ppsim::profiler {

std::string stash_warning(std::uint64_t measured_bytes, std::uint64_t analytic_bytes) {
  const double measured = static_cast<double>(measured_bytes),
               analytic = static_cast<double>(analytic_bytes);
  if (std::abs(measured - analytic) <= kStashTolerance * analytic)
    return "";
  return fmt::format("{} by more than {}%: {} bytes measured, {} bytes analytic (no dropout)",
                     kStashDiffers, kStashTolerance * 100, measured_bytes, analytic_bytes);
}

std::string allocations_warning(std::size_t count) {
  if (count == 0)
    return "";
  return fmt::format("{} {} (the arena should make none)", count, kAllocationsInPhases);
}

void check_measurable(const BlockShape &shape) {
  if (shape.kind != BlockKind::gpt)
    throw Error("", 0, "model",
                "the GPU workload measures the gpt block only; use --analytic for llama");
  if (shape.tp != 1)
    throw Error("", 0, "tp",
                "the GPU workload measures --tp 1 only; use --analytic for tensor parallelism");
  if (shape.attention != Attention::unfused)
    throw Error("", 0, "attention",
                "the GPU workload's attention is unfused; --attention flash is for --analytic");
}

std::string locate_gpu_module(const std::filesystem::path &built,
                              const std::filesystem::path &executable) {
  std::error_code error;
  if (std::filesystem::exists(built, error))
    return built.string();
  const std::filesystem::path tree =
      std::filesystem::weakly_canonical(executable, error).parent_path().parent_path();
  const std::filesystem::path beside = tree / "profiler" / "cuda" / built.filename();
  return std::filesystem::exists(beside, error) ? beside.string() : built.string();
}

std::string default_gpu_module_path() {
#ifdef PPSIM_GPU_MODULE_PATH
  return locate_gpu_module(PPSIM_GPU_MODULE_PATH, "/proc/self/exe");
#else
  return "";
#endif
}

GpuMeasurement run_gpu_profile(const std::string &module_path, const GpuProfileRequest &request) {
  if (module_path.empty()) {
    throw Error("measuring on the GPU is not available in this build of ppsim (built without nvcc "
                "or without cuBLASLt); use --analytic for the analytic cost model");
  }
  std::string why;
  // The CUDA libraries it pulls in must stay loaded until exit (their atexit handlers).
  const auto module = SharedLibrary::open(module_path, why, /*keep_loaded=*/true);
  if (!module)
    throw Error(fmt::format("the GPU workload module could not be loaded: {}", why));
  const auto entry = reinterpret_cast<GpuProfileEntry>(module->symbol(kGpuProfileSymbol));
  if (entry == nullptr) {
    throw Error(fmt::format("{} does not export {}", module_path, kGpuProfileSymbol));
  }
  std::string cost_json;
  GpuMeasurement measurement;
  std::string error;
  if (entry(request, cost_json, measurement.events_ndjson, error) != 0)
    throw Error(error);
  measurement.costs = parse_cost_json(cost_json, "gpu measurement");
  return measurement;
}

} // namespace ppsim::profiler
