#pragma once
// The CUPTI function table (docs/profiler.md, "How measurement works" and "Testing without a GPU").
// Every CUPTI call ppsim makes goes through a CuptiApi, filled by load_cupti() from a dlopen'd
// libcupti or by a test with fakes, so the collector runs the same code on CI as on a GPU. Needs
// the CUPTI headers (CUDA 13.0).
#include <cupti.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ppsim::profiler {

/// The CUPTI entry points ppsim uses, with their C signatures.
struct CuptiApi {
  CUptiResult (*get_version)(std::uint32_t *) = nullptr;
  CUptiResult (*get_timestamp)(std::uint64_t *) = nullptr;
  CUptiResult (*activity_register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                             CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*activity_enable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*activity_disable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*activity_flush_all)(std::uint32_t) = nullptr;
  CUptiResult (*activity_get_next_record)(std::uint8_t *, std::size_t, CUpti_Activity **) = nullptr;
  CUptiResult (*activity_get_num_dropped_records)(CUcontext, std::uint32_t,
                                                  std::size_t *) = nullptr;
  CUptiResult (*activity_push_external_correlation_id)(CUpti_ExternalCorrelationKind,
                                                       std::uint64_t) = nullptr;
  CUptiResult (*activity_pop_external_correlation_id)(CUpti_ExternalCorrelationKind,
                                                      std::uint64_t *) = nullptr;
};

/// The kind ppsim pushes its phase ids under.
inline constexpr CUpti_ExternalCorrelationKind kPpsimCorrelationKind =
    CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

/// The sentence for a CUPTI result code (14, 15, 21, 27, 33, 35, 38, 39, 42, 43, 999, ...).
std::string cupti_error_sentence(int code);

/// Throws Error "<what>: <sentence> (CUPTI error <code>)" unless `result` is success.
void check_cupti(CUptiResult result, const char *what);

} // namespace ppsim::profiler
