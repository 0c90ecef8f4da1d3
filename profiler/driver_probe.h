#pragma once
// The driver probe run before any CUPTI activity call (docs/profiler.md, "How measurement works"):
// CUPTI answers "unknown error" (999) when there is no driver, so ppsim asks the driver itself and
// turns "no driver", "stub driver" and "no device" into one clear sentence.
#include <memory>
#include <string>

namespace ppsim::profiler {

/// The driver entry points the probe needs. system_driver() dlopens libcuda; tests fake it.
class DriverApi {
public:
  virtual ~DriverApi() = default;
  /// Loads the library; returns "" on success, else why it could not be loaded.
  virtual std::string load() = 0;
  /// cuInit(flags): a CUresult.
  virtual int init(unsigned flags) = 0;
  /// cuDeviceGetCount(count): a CUresult.
  virtual int device_count(int *count) = 0;
  /// cuDriverGetVersion(version): a CUresult; the version as 1000 * major + 10 * minor.
  virtual int driver_version(int *version) = 0;
};

/// The oldest driver CUDA version the profiler runs on: CUPTI 13 needs a CUDA 13 driver.
inline constexpr int kMinimumDriverVersion = 13000;

/// The real driver: `library` is "libcuda.so.1" unless a test points it elsewhere.
std::unique_ptr<DriverApi> system_driver(const std::string &library = "libcuda.so.1");

/// What the probe found: devices, or the one sentence saying why there are none.
struct DriverProbe {
  int device_count = 0;
  std::string problem; ///< "" when a usable device exists

  [[nodiscard]] bool ok() const { return problem.empty(); }
};

/// dlopen, cuInit(0), cuDriverGetVersion (at least kMinimumDriverVersion), cuDeviceGetCount,
/// each failure mapped to a sentence.
DriverProbe probe_driver(DriverApi &driver);

/// Whether `library` is already loaded in this process (dlopen with RTLD_NOLOAD: nothing is
/// loaded or initialised). The injection library's check: the driver loads it from cuInit.
bool driver_loaded(const std::string &library = "libcuda.so.1");

/// The sentence for a CUDA runtime error code met while probing (35, 100, ...).
std::string runtime_error_sentence(int cuda_runtime_error);

/// Throws Error with the probe's sentence and what to do instead, unless a device was found.
void require_gpu(const DriverProbe &probe);

} // namespace ppsim::profiler
