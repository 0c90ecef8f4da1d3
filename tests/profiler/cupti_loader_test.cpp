// Loading libcupti (docs/profiler.md, "How measurement works" and "Testing without a GPU"): not
// found, missing symbol, versions, error text.
#include "profiler/cupti_loader.h"

#include "base/error.h"

#include <doctest/doctest.h>

namespace ppsim::profiler {

TEST_CASE("the default candidates follow the load order of docs/profiler.md") {
  CHECK(cupti_candidates() == std::vector<std::string>{"libcupti.so.13", "libcupti.so"});
  CHECK(cupti_candidates("/opt/cupti/libcupti.so") ==
        std::vector<std::string>{"libcupti.so.13", "libcupti.so", "/opt/cupti/libcupti.so"});
}

TEST_CASE("no loadable candidate: libcupti not found, naming what was tried") {
  CHECK_THROWS_WITH_AS(load_cupti({"/nonexistent/libcupti.so", "/also/missing.so"}),
                       "libcupti not found (tried /nonexistent/libcupti.so, /also/missing.so)",
                       Error);
}

TEST_CASE("a library without the CUPTI entry points: the missing symbol is named") {
  CHECK_THROWS_WITH_AS(load_cupti({"libm.so.6"}),
                       "symbol cuptiGetVersion missing from libm.so.6 (need CUPTI >= 13.0)", Error);
}

TEST_CASE("API versions: 13.0 and later pass, older fail, unknown and older-than-headers warn") {
  CHECK(check_cupti_version(130001, 130001).empty());
  CHECK(check_cupti_version(130100, 130001).empty());
  CHECK(check_cupti_version(130000, 130001) ==
        std::vector<std::string>{"CUPTI runtime API version 130000 is older than the headers ppsim "
                                 "was built with (130001)"});
  CHECK(check_cupti_version(0, 130001) ==
        std::vector<std::string>{
            "CUPTI reported API version 0 (no driver?); assuming the header version"});
  CHECK_THROWS_WITH_AS(check_cupti_version(26, 130001),
                       "CUPTI API version 26 is older than 13.0 (need >= 130000)", Error);
}

TEST_CASE("CUPTI error codes become sentences") {
  CHECK(cupti_error_sentence(39) ==
        "another CUPTI client is attached (nsys, ncu, cuda-gdb, or a profiler in the program); use "
        "--timer=cuda-events or the nsys importer");
  CHECK(cupti_error_sentence(999) ==
        "CUPTI failed with an unknown error (often: no CUDA driver or device)");
  CHECK(cupti_error_sentence(15) == "CUPTI is not initialised (no CUDA driver?)");
  CHECK(cupti_error_sentence(35) ==
        "insufficient privileges to profile (see NVreg_RestrictProfilingToAdminUsers)");
  CHECK(cupti_error_sentence(12345) == "CUPTI failed with error 12345");
  CHECK_NOTHROW(check_cupti(CUPTI_SUCCESS, "cuptiActivityEnable"));
  CHECK_THROWS_WITH_AS(check_cupti(CUPTI_ERROR_NOT_COMPATIBLE, "cuptiActivityEnable"),
                       "cuptiActivityEnable: CUPTI is not compatible with this driver or device "
                       "(CUPTI error 14)",
                       Error);
}

} // namespace ppsim::profiler
