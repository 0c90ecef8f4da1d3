// The sweep's output lock (cli/output_file.h, OutputLock; docs/reliability.md, "Resume and
// merge"): one writer per output, even when a lock file is removed while another writer waits.
#include "cli/output_file.h"

#include "base/error.h"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <filesystem>
#include <optional>
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
