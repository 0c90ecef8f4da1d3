#pragma once
// What this machine offers the cases that need a GPU, a driver or CUPTI, asked while the cases
// are registered: a case that cannot run here is declared `TEST_CASE("..." *
// doctest::skip(...))`, so doctest reports it as skipped, never as passed.
#include "profiler/driver_probe.h"
#include "profiler/shared_library.h"

#include <string>
#include <vector>

namespace ppsim::profiler::testing {

/// The CUDA driver loads, initialises and reports at least one device.
inline bool machine_has_gpu() {
  static const bool has_gpu = probe_driver(*system_driver()).ok();
  return has_gpu;
}

/// One of `names` opens with dlopen (a soname on the search path, or a path). A library found
/// stays loaded: unloading one (the toolkit's stub libcuda, say) would leave what it allocated
/// when loaded to LeakSanitizer as leaks of an unknown module.
inline bool library_present(const std::vector<std::string> &names) {
  for (const std::string &name : names) {
    std::string why;
    if (SharedLibrary::open(name, why, /*keep_loaded=*/true))
      return true;
  }
  return false;
}

} // namespace ppsim::profiler::testing
