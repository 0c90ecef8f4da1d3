#include "sim/parallel.h"

#include <system_error>
#include <thread>
#include <vector>

namespace ppsim {

void run_on_threads(unsigned threads, const std::function<void()> &worker) {
  std::vector<std::thread> pool;
  try {
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  } catch (const std::system_error &) {
    // Out of threads (a limit, or memory): the ones started share the work.
  }
  worker();
  for (std::thread &thread : pool) thread.join();
}

} // namespace ppsim
