// Opening the GPU workload module: missing module, wrong library, and (without a GPU) the
// module's own clear failure instead of a crash.
#include "profiler/gpu_profile.h"

#include "profiler/driver_probe.h"
#include "base/error.h"

#include <doctest/doctest.h>
#include <filesystem>

namespace ppsim::profiler {

TEST_CASE("a build without the module says so") {
  CHECK_THROWS_WITH_AS(run_gpu_profile("", {}),
                       "measuring on the GPU is not available in this build of ppsim (built "
                       "without nvcc); use --analytic for the analytic cost model",
                       Error);
}

TEST_CASE("a missing module or a library without the entry point is named") {
  try {
    run_gpu_profile("/nonexistent/libppsim_gpu_workload.so", {});
    FAIL("no error");
  } catch (const Error &error) {
    CHECK(std::string(error.what())
              .rfind("the GPU workload module could not be loaded: "
                     "/nonexistent/libppsim_gpu_workload.so",
                     0) == 0);
  }
  CHECK_THROWS_WITH_AS(run_gpu_profile("libm.so.6", {}),
                       "libm.so.6 does not export ppsim_run_gpu_profile", Error);
}

TEST_CASE("the built module fails cleanly without a GPU") {
  const std::string module = default_gpu_module_path();
  if (module.empty() || !std::filesystem::exists(module)) {
    MESSAGE("the GPU workload module is not built here: skipped");
    return;
  }
  if (probe_driver(*system_driver()).ok()) {
    MESSAGE("a GPU is present: measurement is covered by the GPU suite");
    return;
  }
  GpuProfileRequest request;
  request.shape.hidden = 64;
  request.shape.heads = 4;
  request.shape.seq = 16;
  request.layers = 1;
  // CUPTI answers 999 to cuptiActivityEnable without a driver (spec 2.1): one sentence, no crash.
  CHECK_THROWS_WITH_AS(run_gpu_profile(module, request),
                       "cuptiActivityEnable: CUPTI failed with an unknown error (often: no CUDA "
                       "driver or device) (CUPTI error 999)",
                       Error);
}

} // namespace ppsim::profiler
