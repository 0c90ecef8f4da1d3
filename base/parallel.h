#pragma once
// A fixed number of workers draining a shared queue (sweep points, v-auto patterns, the runs of
// a ranking): one mechanism, so a thread the system cannot start never ends the process.
#include <cstddef>
#include <functional>

namespace ppsim {

/// Runs `worker` on up to `threads` threads, the calling thread included, and returns when all
/// have finished. `worker` must take its tasks from a shared queue until it is empty: when the
/// system refuses a thread, the threads already running (and the caller) do its share. The first
/// exception a worker throws is rethrown after all have finished.
void run_on_threads(unsigned threads, const std::function<void()> &worker);

/// Runs task(0), ..., task(count - 1) on up to `threads` threads (run_on_threads): each index
/// once, in no particular order; a task writes its result to its own slot.
void for_each_index(std::size_t count, unsigned threads,
                    const std::function<void(std::size_t)> &task);

} // namespace ppsim
