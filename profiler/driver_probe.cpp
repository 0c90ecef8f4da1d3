#include "profiler/driver_probe.h"

#include "base/error.h"
#include "profiler/shared_library.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <optional>

namespace ppsim::profiler {
namespace {

// CUresult values from cuda.h (CUDA 13.0).
constexpr int kCudaSuccess = 0;
constexpr int kCudaErrorNoDevice = 100;
constexpr int kCudaErrorStubLibrary = 34;
constexpr int kCudaErrorSystemDriverMismatch = 803;
constexpr int kCudaErrorCompatNotSupported = 804;

class SystemDriver final : public DriverApi {
public:
  explicit SystemDriver(std::string library) : library_name_(std::move(library)) {}

  std::string load() override {
    std::string why;
    library_ = SharedLibrary::open(library_name_, why);
    if (!library_)
      return why;
    init_ = reinterpret_cast<int (*)(unsigned)>(library_->symbol("cuInit"));
    count_ = reinterpret_cast<int (*)(int *)>(library_->symbol("cuDeviceGetCount"));
    version_ = reinterpret_cast<int (*)(int *)>(library_->symbol("cuDriverGetVersion"));
    if (init_ == nullptr || count_ == nullptr || version_ == nullptr)
      return "cuInit, cuDeviceGetCount or cuDriverGetVersion is missing";
    return "";
  }
  int init(unsigned flags) override { return init_(flags); }
  int device_count(int *count) override { return count_(count); }
  int driver_version(int *version) override { return version_(version); }

private:
  std::string library_name_;
  std::optional<SharedLibrary> library_;
  int (*init_)(unsigned) = nullptr;
  int (*count_)(int *) = nullptr;
  int (*version_)(int *) = nullptr;
};

std::string init_failure(int code) {
  switch (code) {
  case kCudaErrorStubLibrary:
    return "only the CUDA stub driver was found (cuInit returned 34, CUDA_ERROR_STUB_LIBRARY)";
  case kCudaErrorNoDevice:
    return "no CUDA device (cuInit returned 100, CUDA_ERROR_NO_DEVICE)";
  case kCudaErrorSystemDriverMismatch:
    return "the NVIDIA kernel module and the driver library differ in version (cuInit returned "
           "803)";
  case kCudaErrorCompatNotSupported:
    return "the CUDA forward-compatibility driver does not support this device (cuInit returned "
           "804)";
  default:
    return fmt::format("the CUDA driver failed to initialise (cuInit returned {})", code);
  }
}

} // namespace

std::unique_ptr<DriverApi> system_driver(const std::string &library) {
  return std::make_unique<SystemDriver>(library);
}

bool driver_loaded(const std::string &library) {
  void *handle = ::dlopen(library.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr)
    return false;
  ::dlclose(handle); // RTLD_NOLOAD took a reference
  return true;
}

DriverProbe probe_driver(DriverApi &driver) {
  DriverProbe probe;
  if (const std::string why = driver.load(); !why.empty()) {
    probe.problem = "no NVIDIA driver: libcuda.so.1 not loadable";
    return probe;
  }
  if (const int code = driver.init(0); code != kCudaSuccess) {
    probe.problem = init_failure(code);
    return probe;
  }
  int version = 0;
  if (driver.driver_version(&version) == kCudaSuccess && version > 0 &&
      version < kMinimumDriverVersion) {
    probe.problem = fmt::format(
        "the NVIDIA driver supports CUDA {}.{} only; the profiler needs a CUDA {} driver "
        "(CUPTI 13): update the driver",
        version / 1000, version % 1000 / 10, kMinimumDriverVersion / 1000);
    return probe;
  }
  int count = 0;
  if (const int code = driver.device_count(&count); code != kCudaSuccess) {
    probe.problem =
        fmt::format("the CUDA driver could not count devices (cuDeviceGetCount returned {})", code);
    return probe;
  }
  if (count <= 0) {
    probe.problem = "no CUDA device";
    return probe;
  }
  probe.device_count = count;
  return probe;
}

std::string runtime_error_sentence(int cuda_runtime_error) {
  switch (cuda_runtime_error) {
  case 0:
    return "";
  case 35:
    return "driver too old or absent (cudaErrorInsufficientDriver)";
  case 100:
    return "no CUDA device (cudaErrorNoDevice)";
  case 34:
    return "only the CUDA stub driver was found (cudaErrorStubLibrary)";
  default:
    return fmt::format("the CUDA runtime failed with error {}", cuda_runtime_error);
  }
}

void require_gpu(const DriverProbe &probe) {
  if (probe.ok())
    return;
  throw Error(fmt::format("{}; ppsim profile needs an NVIDIA GPU (use --analytic, or "
                          "--allow-no-gpu, for the analytic cost model)",
                          probe.problem));
}

} // namespace ppsim::profiler
