// libFuzzer target for one of ppsim's input readers (docs/reliability.md, "Fuzzing"): the bytes
// are handed to the reader named by PPSIM_FUZZ_READER (tests/fuzz/readers.h); a ppsim::Error is
// the expected answer to bad input, anything else that escapes (another exception, a crash, a
// sanitizer report, a hang) is a finding. Built by -DPPSIM_FUZZ=ON with clang, one executable per
// reader; each input is read in the same process (no file, no fork).
#include "base/error.h"
#include "tests/fuzz/readers.h"

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  try {
    ppsim::fuzz::read_input(PPSIM_FUZZ_READER,
                            std::string_view(reinterpret_cast<const char *>(data), size));
  } catch (const ppsim::Error &) {
    // The one-line answer to bad input.
  } catch (const std::exception &error) {
    std::fprintf(stderr, "escaped: %s\n", error.what());
    __builtin_trap();
  }
  return 0;
}
