// Opening the GPU workload module: missing module, wrong library, and (without a GPU) the
// module's own clear failure instead of a crash.
#include "profiler/gpu_profile.h"

#include "base/error.h"
#include "base/text_file.h"
#include "profiler/driver_probe.h"
#include "tests/cli/cli_support.h"
#include "tests/profiler/machine.h"

#include <doctest/doctest.h>
#include <filesystem>

namespace ppsim::profiler {

TEST_CASE("a build without the module says so") {
  CHECK_THROWS_WITH_AS(run_gpu_profile("", {}),
                       "measuring on the GPU is not available in this build of ppsim (built "
                       "without nvcc or without cuBLASLt); use --analytic for the analytic cost "
                       "model",
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

TEST_CASE("the module is found beside the executable of a build tree copied elsewhere") {
  const ppsim::testing::Scratch scratch("gpu-module");
  namespace fs = std::filesystem;
  const std::string built = "/nonexistent/build/profiler/cuda/libppsim_gpu_workload.so";
  const std::string executable = scratch.file("copy/cli/ppsim");
  // Nothing in the copy: the compiled path, which the error then names.
  CHECK(locate_gpu_module(built, executable) == built);
  fs::create_directories(scratch.file("copy/profiler/cuda"));
  scratch.write("copy/profiler/cuda/libppsim_gpu_workload.so", "");
  CHECK(fs::equivalent(locate_gpu_module(built, executable),
                       scratch.file("copy/profiler/cuda/libppsim_gpu_workload.so")));
  // The compiled path wins while it exists.
  scratch.write("built.so", "");
  CHECK(locate_gpu_module(scratch.file("built.so"), executable) == scratch.file("built.so"));
}

// Skipped where the module is not built, and on a GPU (the GPU suite measures there).
TEST_CASE("the built module fails cleanly without a GPU" *
          doctest::skip(default_gpu_module_path().empty() ||
                        !std::filesystem::exists(default_gpu_module_path()) ||
                        testing::machine_has_gpu())) {
  const std::string module = default_gpu_module_path();
  GpuProfileRequest request;
  request.shape.hidden = 64;
  request.shape.heads = 4;
  request.shape.seq = 16;
  request.layers = 1;
  // CUPTI answers 999 to cuptiActivityEnable without a driver (docs/profiler.md, "How measurement
  // works"): one sentence, no crash.
  CHECK_THROWS_WITH_AS(run_gpu_profile(module, request),
                       "cuptiActivityEnable: CUPTI failed with an unknown error (often: no CUDA "
                       "driver or device) (CUPTI error 999)",
                       Error);
}

TEST_CASE(
    "the workload's warnings: both values and the tolerance, fixed text that gpu-check greps") {
  CHECK(stash_warning(1000, 1000).empty());
  CHECK(stash_warning(1010, 1000).empty()); // within 1%
  CHECK(stash_warning(1011, 1000) == "measured stash differs from the analytic by more than 1%: "
                                     "1011 bytes measured, 1000 bytes analytic "
                                     "(no dropout)");
  CHECK(stash_warning(989, 1000).find(kStashDiffers) == 0);
  CHECK(allocations_warning(0).empty());
  CHECK(allocations_warning(3) ==
        "3 device allocations inside timed phases (the arena should make none)");
  // The script greps these very strings (as the last argument of a check).
  const std::string script = read_text_file(PPSIM_SOURCE_DIR "/scripts/gpu-check", "script");
  CHECK(script.find(fmt::format(" \"{}\"\n", kStashDiffers)) != std::string::npos);
  CHECK(script.find(fmt::format(" \"{}\"\n", kAllocationsInPhases)) != std::string::npos);
}

TEST_CASE("gpu-check fails a check whose run failed, and fails on the workload's warning") {
  // A stand-in nvidia-smi that lists a GPU, and a stand-in ppsim in a build folder the script
  // takes as built.
  const ppsim::testing::Scratch scratch("gpu-check");
  namespace fs = std::filesystem;
  fs::create_directories(scratch.file("bin"));
  fs::create_directories(scratch.file("build/cli"));
  const auto executable = [&](const std::string &name, const std::string &text) {
    scratch.write(name, text);
    fs::permissions(scratch.file(name), fs::perms::owner_all);
  };
  executable("bin/nvidia-smi", "#!/bin/sh\necho 'GPU 0: Stand-in (UUID: GPU-0)'\n");
  const auto run = [&] {
    const int status =
        std::system(fmt::format("PATH='{}':\"$PATH\" sh '{}/scripts/gpu-check' '{}' >'{}' 2>&1",
                                scratch.file("bin"), PPSIM_SOURCE_DIR, scratch.file("build"),
                                scratch.file("check.out"))
                        .c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };

  // The profile fails: no check of its output may pass.
  executable("build/cli/ppsim", "#!/bin/sh\necho 'ppsim: no CUDA driver' >&2\nexit 1\n");
  CHECK(run() == 1);
  std::string out = scratch.read("check.out");
  CHECK(out.find("FAIL arena stash bytes == analytic: no cupti run to check") != std::string::npos);
  CHECK(out.find(
            "FAIL no allocation in timed phases (CUPTI memory records): no cupti run to check") !=
        std::string::npos);
  CHECK(out.find("PASS") == std::string::npos);

  // The profile succeeds but warns that the stash differs, with the workload's own text.
  executable(
      "build/cli/ppsim",
      fmt::format("#!/bin/sh\nout=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n"
                  "printf 'layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,bwd_total_ms,recompute_ms\\n"
                  "0,1,1,1,2,1\\n' >\"$out\"\necho 'ppsim: warning: {}' >&2\n",
                  stash_warning(2000, 1000)));
  CHECK(run() == 1);
  out = scratch.read("check.out");
  CHECK(out.find("FAIL arena stash bytes == analytic: ppsim: warning: measured stash differs from "
                 "the analytic") != std::string::npos);
  CHECK(out.find("PASS no allocation in timed phases (CUPTI memory records) (no warning)") !=
        std::string::npos);
  CHECK(out.find("PASS B + W ~ BW, layer 0") != std::string::npos);
}

} // namespace ppsim::profiler
