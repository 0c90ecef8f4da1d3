#include "base/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ppsim {

void run_on_threads(unsigned threads, const std::function<void()> &worker) {
  // The first exception of any worker is rethrown once every thread has been joined (a thread
  // left joinable, or an exception escaping a thread, would end the process).
  std::mutex failure_mutex;
  std::exception_ptr failure;
  const auto guarded = [&] {
    try {
      worker();
    } catch (...) {
      const std::lock_guard lock(failure_mutex);
      if (!failure)
        failure = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  try {
    for (unsigned t = 1; t < threads; ++t)
      pool.emplace_back(guarded);
  } catch (...) {
    // Out of threads (a limit, or memory): the ones started share the work.
  }
  guarded();
  for (std::thread &thread : pool)
    thread.join();
  if (failure)
    std::rethrow_exception(failure);
}

void for_each_index(std::size_t count, unsigned threads,
                    const std::function<void(std::size_t)> &task) {
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t k = next++; k < count; k = next++)
      task(k);
  };
  run_on_threads(static_cast<unsigned>(std::clamp<std::size_t>(count, 1, std::max(1u, threads))),
                 worker);
}

} // namespace ppsim
