// NVIDIA's own libraries, loaded for real where the machine has them (docs/profiler.md, "Testing
// without a GPU"): libcupti resolves and iterates a synthetic buffer without a GPU, the toolkit's
// stub libcuda is told apart from a driver, and the real probe answers in a documented sentence.
// These cases run in their own process, profiler_nvidia_tests, without LeakSanitizer: with
// libcupti in the process its tracer crashed at exit (tests/CMakeLists.txt).
#include "profiler/driver_probe.h"
#include "tests/profiler/machine.h"
#ifdef PPSIM_HAVE_CUPTI
#include "activity_fixtures.h"
#include "profiler/cupti_loader.h"
#include "profiler/decoder.h"
#endif

#include <doctest/doctest.h>
#include <filesystem>
#include <string>

namespace ppsim::profiler {
namespace {

// The CUDA 13 toolkit ships lib/stubs/libcuda.so whose cuInit returns 34; skipped without one.
std::string installed_stub_driver() {
  for (const char *path :
       {"/usr/local/cuda/lib/stubs/libcuda.so", "/usr/local/cuda/lib64/stubs/libcuda.so",
        "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"})
    if (std::filesystem::exists(path))
      return path;
  return "";
}

} // namespace

#ifdef PPSIM_HAVE_CUPTI // the CUPTI layers are built only with the CUDA 13 headers
TEST_CASE("the real libcupti loads without a GPU (skipped when absent)" *
          doctest::skip(!testing::library_present(cupti_candidates()))) {
  const CuptiLibrary cupti = load_cupti(cupti_candidates());
  const bool resolved =
      cupti.api.activity_enable != nullptr && cupti.api.activity_get_next_record != nullptr;
  CHECK(resolved);
  std::uint64_t timestamp = 0;
  CHECK(cupti.api.get_timestamp(&timestamp) == CUPTI_SUCCESS);
  CHECK(timestamp > 0);
}

TEST_CASE("the real libcupti iterator reads the same synthetic buffer" *
          doctest::skip(!testing::library_present(cupti_candidates()))) {
  const CuptiLibrary cupti = load_cupti(cupti_candidates());
  char name[] = "ampere_bf16_gemm";
  testing::ActivityBuffer buffer = testing::mixed_buffer(name);
  DecodedActivity decoded;
  decode_buffer(buffer.data(), buffer.size(), cupti.api.activity_get_next_record, decoded);
  testing::check_mixed(decoded);
}
#endif

TEST_CASE("the real probe on this machine") {
  const auto driver = system_driver();
  const DriverProbe probe = probe_driver(*driver);
  if (probe.ok()) {
    MESSAGE("a CUDA device is present; the no-GPU message cannot be checked here");
    CHECK(probe.device_count > 0);
    return;
  }
  // Without a GPU the answer is one of the documented sentences, never a crash or CUPTI's 999.
  const bool known = probe.problem == "no NVIDIA driver: libcuda.so.1 not loadable" ||
                     probe.problem.rfind("only the CUDA stub driver", 0) == 0 ||
                     probe.problem.rfind("no CUDA device", 0) == 0;
  CHECK_MESSAGE(known, probe.problem);
}

TEST_CASE("the toolkit's stub libcuda is recognised as a stub" *
          doctest::skip(installed_stub_driver().empty())) {
  const auto driver = system_driver(installed_stub_driver());
  CHECK(probe_driver(*driver).problem ==
        "only the CUDA stub driver was found (cuInit returned 34, CUDA_ERROR_STUB_LIBRARY)");
}

} // namespace ppsim::profiler
