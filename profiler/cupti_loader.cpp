#include "profiler/cupti_loader.h"

#include "base/error.h"

#include <fmt/format.h>

namespace ppsim::profiler {
namespace {

constexpr std::uint32_t kMinimumVersion = 130000; // 13.0, in the xxyyzz scheme

template <typename Function>
void resolve(const SharedLibrary &library, const char *name, Function &target) {
  void *address = library.symbol(name);
  if (address == nullptr) {
    throw Error(
        fmt::format("symbol {} missing from {} (need CUPTI >= 13.0)", name, library.name()));
  }
  target = reinterpret_cast<Function>(address);
}

} // namespace

std::string cupti_error_sentence(int code) {
  switch (code) {
  case 0:
    return "success";
  case 14:
    return "CUPTI is not compatible with this driver or device";
  case 15:
    return "CUPTI is not initialised (no CUDA driver?)";
  case 21:
    return "the activity kind is not supported";
  case 27:
    return "the operation is not supported on this device";
  case 33:
    return "virtualised devices (vGPU) are not supported";
  case 35:
    return "insufficient privileges to profile (see NVreg_RestrictProfilingToAdminUsers)";
  case 38:
    return "the legacy event and metric profiling APIs are not supported in CUDA 13";
  case 39:
    return "another CUPTI client is attached (nsys, ncu, cuda-gdb, or a profiler in the "
           "program); use --timer=cuda-events or the nsys importer";
  case 42:
    return "CMP (crypto mining) devices are not supported";
  case 43:
    return "MIG instances are not supported";
  case 999:
    return "CUPTI failed with an unknown error (often: no CUDA driver or device)";
  default:
    return fmt::format("CUPTI failed with error {}", code);
  }
}

void check_cupti(CUptiResult result, const char *what) {
  if (result == CUPTI_SUCCESS)
    return;
  const int code = static_cast<int>(result);
  throw Error(fmt::format("{}: {} (CUPTI error {})", what, cupti_error_sentence(code), code));
}

std::vector<std::string> cupti_candidates(const std::string &cupti_path) {
  std::vector<std::string> candidates{"libcupti.so.13", "libcupti.so"};
  if (!cupti_path.empty())
    candidates.push_back(cupti_path);
  return candidates;
}

CuptiLibrary load_cupti(const std::vector<std::string> &candidates) {
  std::string tried;
  for (const std::string &candidate : candidates) {
    std::string why;
    auto library = SharedLibrary::open(candidate, why, /*keep_loaded=*/true);
    tried += tried.empty() ? candidate : ", " + candidate;
    if (!library)
      continue;
    CuptiLibrary loaded{std::move(*library), {}, 0, {}};
    CuptiApi &api = loaded.api;
    resolve(loaded.library, "cuptiGetVersion", api.get_version);
    resolve(loaded.library, "cuptiGetTimestamp", api.get_timestamp);
    resolve(loaded.library, "cuptiActivityRegisterCallbacks", api.activity_register_callbacks);
    resolve(loaded.library, "cuptiActivityEnable", api.activity_enable);
    resolve(loaded.library, "cuptiActivityDisable", api.activity_disable);
    resolve(loaded.library, "cuptiActivityFlushAll", api.activity_flush_all);
    resolve(loaded.library, "cuptiActivityGetNextRecord", api.activity_get_next_record);
    resolve(loaded.library, "cuptiActivityGetNumDroppedRecords",
            api.activity_get_num_dropped_records);
    resolve(loaded.library, "cuptiActivityPushExternalCorrelationId",
            api.activity_push_external_correlation_id);
    resolve(loaded.library, "cuptiActivityPopExternalCorrelationId",
            api.activity_pop_external_correlation_id);
    check_cupti(api.get_version(&loaded.runtime_version), "cuptiGetVersion");
    loaded.warnings = check_cupti_version(loaded.runtime_version);
    return loaded;
  }
  throw Error(fmt::format("libcupti not found (tried {})", tried));
}

std::vector<std::string> check_cupti_version(std::uint32_t runtime_version,
                                             std::uint32_t header_version) {
  if (runtime_version == 0) {
    // Observed with the CUDA 13.0 libcupti and no driver: success, version 0.
    return {"CUPTI reported API version 0 (no driver?); assuming the header version"};
  }
  if (runtime_version < kMinimumVersion) {
    throw Error(fmt::format("CUPTI API version {} is older than 13.0 (need >= {})", runtime_version,
                            kMinimumVersion));
  }
  if (runtime_version < header_version) {
    return {fmt::format("CUPTI runtime API version {} is older than the headers ppsim was built "
                        "with ({})",
                        runtime_version, header_version)};
  }
  return {};
}

} // namespace ppsim::profiler
