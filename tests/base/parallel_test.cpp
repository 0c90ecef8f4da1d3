// base/parallel: run_on_threads drains a shared queue on up to n threads, the caller included.
#include "base/index.h"
#include "base/parallel.h"

#include "base/error.h"

#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

using ppsim::run_on_threads;

namespace {

/// A queue of `tasks` indices; the worker marks each index done once.
struct Queue {
  explicit Queue(int tasks) : done(ppsim::at(tasks)) {}
  std::atomic<int> next{0};
  std::vector<std::atomic<int>> done;
  void drain() {
    for (int i = next++; i < static_cast<int>(done.size()); i = next++)
      ++done[ppsim::at(i)];
  }
  [[nodiscard]] bool each_once() const {
    for (const auto &count : done) {
      if (count.load() != 1)
        return false;
    }
    return true;
  }
};

} // namespace

TEST_CASE("run_on_threads does every task exactly once") {
  for (const unsigned threads : {1u, 2u, 4u, 16u}) {
    CAPTURE(threads);
    Queue queue(10000);
    run_on_threads(threads, [&] { queue.drain(); });
    CHECK(queue.each_once());
  }
}

TEST_CASE("run_on_threads starts the worker once per thread, the caller being one of them") {
  std::atomic<int> calls{0};
  std::mutex mutex;
  std::set<std::thread::id> ids;
  run_on_threads(4, [&] {
    ++calls;
    const std::lock_guard lock(mutex);
    ids.insert(std::this_thread::get_id());
  });
  CHECK(calls.load() == 4);
  CHECK(ids.size() == 4);
  CHECK(ids.count(std::this_thread::get_id()) == 1);
}

TEST_CASE("run_on_threads with 0 or 1 thread runs the worker once, on the caller") {
  for (const unsigned threads : {0u, 1u}) {
    CAPTURE(threads);
    std::vector<std::thread::id> ids; // unsynchronised on purpose: only the caller may run
    run_on_threads(threads, [&] { ids.push_back(std::this_thread::get_id()); });
    REQUIRE(ids.size() == 1);
    CHECK(ids.front() == std::this_thread::get_id());
  }
}

TEST_CASE("run_on_threads rethrows a worker's exception after all have finished") {
  Queue queue(2000);
  const auto caller = std::this_thread::get_id();
  std::atomic<int> finished{0};
  // Only a helper thread throws, after its share: the caller must still see it, with its type.
  CHECK_THROWS_WITH_AS(run_on_threads(3,
                                      [&] {
                                        queue.drain();
                                        ++finished;
                                        if (std::this_thread::get_id() != caller) {
                                          throw ppsim::Error("worker failed");
                                        }
                                      }),
                       "worker failed", ppsim::Error);
  CHECK(finished.load() == 3);
  CHECK(queue.each_once());
}

TEST_CASE("run_on_threads rethrows one exception when every worker throws") {
  std::atomic<int> calls{0};
  CHECK_THROWS_AS(run_on_threads(4,
                                 [&] {
                                   ++calls;
                                   throw std::out_of_range("each");
                                 }),
                  std::out_of_range);
  CHECK(calls.load() == 4);
  // The caller's own exception propagates too.
  CHECK_THROWS_WITH_AS(run_on_threads(1, [] { throw std::logic_error("caller"); }), "caller",
                       std::logic_error);
}
