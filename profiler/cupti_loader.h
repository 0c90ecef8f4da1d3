#pragma once
// Loading libcupti at run time (docs/profiler.md, "How measurement works"): find the library,
// resolve every symbol of the CuptiApi table, check the API version.
#include "profiler/cupti_api.h"
#include "profiler/shared_library.h"

#include <string>
#include <vector>

namespace ppsim::profiler {

/// The libraries tried in order: libcupti.so.13, libcupti.so, then `cupti_path` when given.
std::vector<std::string> cupti_candidates(const std::string &cupti_path = "");

/// A loaded CUPTI: the open library, its function table and its reported API version.
struct CuptiLibrary {
  SharedLibrary library;
  CuptiApi api;
  std::uint32_t runtime_version = 0; ///< cuptiGetVersion (0 when CUPTI reports none)
  std::vector<std::string> warnings;
};

/// Opens the first candidate that loads; Error "libcupti not found (tried ...)" when none does,
/// "symbol X missing (need CUPTI >= 13.0)" when one lacks an entry point.
CuptiLibrary load_cupti(const std::vector<std::string> &candidates);

/// Checks a runtime API version against the headers (`xxyyzz` from 13.0): throws Error when it
/// is older than 13.0, returns warnings (older than the headers; 0 = not reported).
std::vector<std::string> check_cupti_version(std::uint32_t runtime_version,
                                             std::uint32_t header_version = CUPTI_API_VERSION);

} // namespace ppsim::profiler
