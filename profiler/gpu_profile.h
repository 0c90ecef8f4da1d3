#pragma once
// The measured path of `ppsim profile` (spec profiler.md 3). The GPU workload lives in a module
// (libppsim_gpu_workload.so, built when nvcc is found) that the CLI opens with dlopen only after
// the driver probe found a device, so the ppsim binary itself links no CUDA library.
#include "profiler/cost_model.h"
#include "profiler/run_plan.h"
#include "costs/cost_file.h"

#include <string>

namespace ppsim::profiler {

/// What to measure and how.
struct GpuProfileRequest {
  BlockShape shape;
  int layers = 4;
  int reps = 20;
  int warmup = 5;
  RunMode mode = RunMode::isolated;
  PhaseTimer timer = PhaseTimer::cupti;
  std::string cupti_path; ///< with the cupti timer
  DeviceThroughput device; ///< only for the analytic columns kept beside the measurements
};

/// The module's entry point: fills `cost_json` (write_cost_json) or `error`; returns 0 on success.
using GpuProfileEntry = int (*)(const GpuProfileRequest &request, std::string &cost_json,
                                std::string &error);
/// Its exported name.
inline constexpr const char *kGpuProfileSymbol = "ppsim_run_gpu_profile";

/// Throws Error naming the field unless the GPU workload can measure `shape` (the gpt block with
/// --tp 1); called before any GPU work, on the CLI side too.
void check_measurable(const BlockShape &shape);

/// The module path compiled in ("" when the workload was not built).
std::string default_gpu_module_path();

/// Opens the module, runs the measurement and parses its cost file; throws Error when the module
/// is missing or the measurement fails.
CostFile run_gpu_profile(const std::string &module_path, const GpuProfileRequest &request);

} // namespace ppsim::profiler
