// Driver probe (docs/profiler.md, "How measurement works" and "Testing without a GPU"): every
// failure becomes one sentence; the real probe on a machine without a GPU says so.
#include "profiler/driver_probe.h"

#include "tests/base/error_support.h"

#include <doctest/doctest.h>

namespace ppsim::profiler {
namespace {

struct FakeDriver final : DriverApi {
  std::string load_error;
  int init_result = 0;
  int count_result = 0;
  int devices = 1;
  int init_calls = 0;

  std::string load() override { return load_error; }
  int init(unsigned flags) override {
    CHECK(flags == 0);
    ++init_calls;
    return init_result;
  }
  int device_count(int *count) override {
    *count = devices;
    return count_result;
  }
  int version = 13000;
  int driver_version(int *out) override {
    *out = version;
    return 0;
  }
};

std::string gpu_error(const DriverProbe &probe) {
  return ppsim::testing::error_message([&] { require_gpu(probe); });
}

} // namespace

TEST_CASE("a working driver with devices passes the probe") {
  FakeDriver driver;
  driver.devices = 2;
  const DriverProbe probe = probe_driver(driver);
  CHECK(probe.ok());
  CHECK(probe.device_count == 2);
  CHECK(gpu_error(probe) == "no error");
}

TEST_CASE("a driver older than CUDA 13 is named with its version, before any CUPTI call") {
  FakeDriver old;
  old.version = 12040;
  CHECK(probe_driver(old).problem == "the NVIDIA driver supports CUDA 12.4 only; the profiler "
                                     "needs a CUDA 13 driver (CUPTI 13): update the driver");
  FakeDriver current;
  current.version = 13010;
  CHECK(probe_driver(current).ok());
}

TEST_CASE("each driver failure maps to one sentence") {
  FakeDriver absent;
  absent.load_error = "libcuda.so.1: cannot open shared object file";
  CHECK(probe_driver(absent).problem == "no NVIDIA driver: libcuda.so.1 not loadable");
  CHECK(absent.init_calls == 0);

  const auto init_problem = [](int init_result) {
    FakeDriver driver;
    driver.init_result = init_result;
    return probe_driver(driver).problem;
  };
  CHECK(init_problem(34) ==
        "only the CUDA stub driver was found (cuInit returned 34, CUDA_ERROR_STUB_LIBRARY)");
  CHECK(init_problem(100) == "no CUDA device (cuInit returned 100, CUDA_ERROR_NO_DEVICE)");
  CHECK(init_problem(803) ==
        "the NVIDIA kernel module and the driver library differ in version (cuInit returned 803)");
  CHECK(init_problem(999) == "the CUDA driver failed to initialise (cuInit returned 999)");

  FakeDriver zero;
  zero.devices = 0;
  CHECK(probe_driver(zero).problem == "no CUDA device");

  FakeDriver count_fails;
  count_fails.count_result = 3;
  CHECK(probe_driver(count_fails).problem ==
        "the CUDA driver could not count devices (cuDeviceGetCount returned 3)");
}

TEST_CASE("driver_loaded tells a library in the process without loading one") {
  CHECK(driver_loaded("libc.so.6"));
  CHECK_FALSE(driver_loaded("libppsim-no-such-driver.so.1"));
}

TEST_CASE("runtime error codes met while probing have sentences") {
  CHECK(runtime_error_sentence(35) == "driver too old or absent (cudaErrorInsufficientDriver)");
  CHECK(runtime_error_sentence(100) == "no CUDA device (cudaErrorNoDevice)");
  CHECK(runtime_error_sentence(7) == "the CUDA runtime failed with error 7");
}

TEST_CASE("require_gpu says what is missing and what to do instead") {
  FakeDriver absent;
  absent.load_error = "missing";
  CHECK(gpu_error(probe_driver(absent)) ==
        "no NVIDIA driver: libcuda.so.1 not loadable; ppsim profile needs an NVIDIA GPU (use "
        "--analytic, or --allow-no-gpu, for the analytic cost model)");
}

TEST_CASE("a library without the driver entry points is not a driver") {
  const auto driver = system_driver("libm.so.6");
  CHECK(driver->load() == "cuInit, cuDeviceGetCount or cuDriverGetVersion is missing");
}

} // namespace ppsim::profiler
