// The sweep's output lock (cli/output_file.h, OutputLock; docs/reliability.md, "Resume and
// merge"): one writer per output, even when a lock file is removed while another writer waits.
#include "cli/output_file.h"

#include "base/error.h"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <filesystem>
#include <atomic>
#include <optional>
#include <thread>
#include <vector>
#include <sys/file.h>
#include <unistd.h>

using namespace ppsim;
using namespace ppsim::cli;

TEST_CASE("issue_32 the output lock admits one writer, and a removed lock file is no lock") {
  const std::string output =
      (std::filesystem::temp_directory_path() / "ppsim_output_lock.csv").string();
  const std::string lock_path = output + ".lock";
  std::filesystem::remove(lock_path);
  std::optional<OutputLock> first(std::in_place, output);
  CHECK(std::filesystem::exists(lock_path));
  CHECK_THROWS_WITH_AS(OutputLock{output},
                       doctest::Contains("another sweep is writing this output (it holds"), Error);
  // A second writer opened the lock file and waits to lock it while the first one finishes,
  // removing the file: the lock it then wins is on a file the path no longer names.
  const int stale = ::open(lock_path.c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(stale >= 0);
  CHECK(OutputLock::names_open_file(lock_path, stale));
  first.reset();
  CHECK_FALSE(std::filesystem::exists(lock_path));
  CHECK(::flock(stale, LOCK_EX | LOCK_NB) == 0);
  CHECK_FALSE(OutputLock::names_open_file(lock_path, stale));
  // A third writer takes the lock on a new file, which the second one's check then refuses.
  {
    const OutputLock third(output);
    CHECK(std::filesystem::exists(lock_path));
    CHECK_FALSE(OutputLock::names_open_file(lock_path, stale));
  }
  ::close(stale);
  CHECK_FALSE(std::filesystem::exists(lock_path));
}

TEST_CASE("issue_32 writers racing for the lock never hold it together") {
  // Four threads take and release the lock as fast as they can (each its own open file, as
  // separate processes have); whoever holds it creates a marker file exclusively and removes it
  // before letting go. Two holders at once would find the marker there.
  const std::filesystem::path folder = std::filesystem::temp_directory_path();
  const std::string output = (folder / "ppsim_output_race.csv").string();
  const std::string marker = (folder / "ppsim_output_race.holder").string();
  std::filesystem::remove(output + ".lock");
  std::filesystem::remove(marker);
  std::atomic<int> held{0}, overlaps{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w)
    writers.emplace_back([&] {
      for (int k = 0; k < 300; ++k) {
        try {
          const OutputLock lock(output);
          const int fd = ::open(marker.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
          if (fd < 0) {
            ++overlaps;
            continue;
          }
          ::close(fd);
          ::unlink(marker.c_str());
          ++held;
        } catch (const Error &) {
          // Held by another writer: try again.
        }
      }
    });
  for (std::thread &writer : writers)
    writer.join();
  CHECK(overlaps == 0);
  CHECK(held > 0);
  CHECK_FALSE(std::filesystem::exists(output + ".lock"));
}
