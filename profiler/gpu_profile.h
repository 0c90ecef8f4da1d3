#pragma once
// The measured path of `ppsim profile` (docs/profiler.md, "How measurement works"). The GPU
// workload lives in a module (libppsim_gpu_workload.so, built when nvcc is found) that the CLI
// opens with dlopen only after the driver probe found a device, so the ppsim binary itself links no
// CUDA library.
#include "costs/cost_file.h"
#include "profiler/cost_model.h"
#include "profiler/run_plan.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace ppsim::profiler {

/// What to measure and how.
/// The workload's block: its attention kernel is unfused (check_measurable refuses flash).
inline BlockShape measured_block() {
  BlockShape shape;
  shape.attention = Attention::unfused;
  return shape;
}

struct GpuProfileRequest {
  BlockShape shape = measured_block();
  int layers = 4;
  int reps = 20;
  int warmup = 5;
  RunMode mode = RunMode::isolated;
  PhaseTimer timer = PhaseTimer::cupti;
  std::string cupti_path;   ///< with the cupti timer
  DeviceThroughput device;  ///< only for the analytic columns kept beside the measurements
  bool keep_events = false; ///< with the cupti timer: return the decoded events too
};

/// What a measurement gives: the cost file and, when asked for, the decoded CUPTI events as NDJSON
/// (docs/profiler.md, "Event dumps"), which replay through attribution to the same times.
struct GpuMeasurement {
  CostFile costs;
  std::string events_ndjson;
};

/// The module's entry point: fills `cost_json` (write_cost_json) and `events_ndjson` (when the
/// request keeps events), or `error`; returns 0 on success.
using GpuProfileEntry = int (*)(const GpuProfileRequest &request, std::string &cost_json,
                                std::string &events_ndjson, std::string &error);
/// Its exported name.
inline constexpr const char *kGpuProfileSymbol = "ppsim_run_gpu_profile";

/// The fixed parts of the workload's warnings that scripts/gpu-check greps for (its checks "the
/// arena's stash equals the analytic one" and "no allocation in timed phases"); a test checks
/// that the script greps these very strings.
inline constexpr std::string_view kStashDiffers = "measured stash differs from the analytic";
inline constexpr std::string_view kAllocationsInPhases = "device allocations inside timed phases";
/// How far the measured stash may be from the analytic one, relative (docs/profiler.md).
inline constexpr double kStashTolerance = 0.01;

/// The warning when the measured stash differs from the analytic one by more than
/// kStashTolerance, both values in it; "" when they agree.
std::string stash_warning(std::uint64_t measured_bytes, std::uint64_t analytic_bytes);
/// The warning for `count` > 0 device allocations inside timed phases; "" for none.
std::string allocations_warning(std::size_t count);

/// Throws Error naming the field unless the GPU workload can measure `shape` (the gpt block with
/// --tp 1); called before any GPU work, on the CLI side too.
void check_measurable(const BlockShape &shape);

/// `built` when it exists; else, for a build tree copied to a GPU machine, the same file name in
/// `profiler/cuda/` of the tree holding `executable` (`<tree>/cli/ppsim`) when that exists;
/// else `built` (which the error then names).
std::string locate_gpu_module(const std::filesystem::path &built,
                              const std::filesystem::path &executable);

/// The module built with ppsim, located from the path compiled in and this executable; "" when
/// the workload was not built.
std::string default_gpu_module_path();

/// Opens the module, runs the measurement and parses its cost file; throws Error when the module
/// is missing or the measurement fails.
GpuMeasurement run_gpu_profile(const std::string &module_path, const GpuProfileRequest &request);

} // namespace ppsim::profiler
