// base/text_file: whole-file reads with one error per failure, and path helpers.
#include "base/text_file.h"

#include "base/error.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using ppsim::Error;
using ppsim::read_text_file;

namespace {

/// A fresh directory under the temporary folder, removed with its content at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("ppsim_text_file_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(counter()++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  static int &counter() {
    static int next = 0;
    return next;
  }
  [[nodiscard]] std::string file(const std::string &name, const std::string &content) const {
    const fs::path target = path / name;
    std::ofstream out(target, std::ios::binary);
    out << content;
    return target.string();
  }
};

} // namespace

TEST_CASE("read_text_file returns the bytes exactly") {
  const TempDir dir;
  const std::string content = std::string("line one\r\nline two\n") + '\0' + "after a NUL\xff";
  CHECK(read_text_file(dir.file("a.toml", content), "scenario file") == content);
  CHECK(read_text_file(dir.file("empty.csv", ""), "cost file").empty());
}

TEST_CASE("read_text_file reads files of several blocks") {
  const TempDir dir;
  // Three 1 MiB blocks and a partial one, with a pattern that shows a misplaced block.
  std::string content;
  content.reserve((3u << 20) + 17);
  for (std::size_t i = 0; i < (3u << 20) + 17; ++i)
    content.push_back(static_cast<char>('a' + i % 23));
  CHECK(read_text_file(dir.file("big.csv", content), "cost file") == content);
  // Exactly one block: the read that ends at the block's end must not lose or repeat it.
  const std::string block(std::size_t{1} << 20, 'x');
  CHECK(read_text_file(dir.file("block.csv", block), "cost file") == block);
}

TEST_CASE("read_text_file names the path and what it is in every refusal") {
  const TempDir dir;
  const std::string missing = (dir.path / "missing.toml").string();
  CHECK_THROWS_WITH_AS(read_text_file(missing, "scenario file"),
                       (missing + ": cannot open the scenario file").c_str(), Error);
  CHECK_THROWS_WITH_AS(read_text_file(dir.path.string(), "schedule file"),
                       (dir.path.string() + ": is a directory, not a schedule file").c_str(),
                       Error);
  try {
    read_text_file(missing, "plan file");
    FAIL("no error");
  } catch (const Error &error) {
    CHECK(error.file() == missing);
    CHECK(error.line() == 0);
    CHECK(error.sentence() == "cannot open the plan file");
  }
}

namespace {

// The bytes this process has read through read(2) and its kin ("rchar" of /proc/self/io); -1
// where the kernel does not say.
long bytes_read_by_this_process() {
  std::ifstream io("/proc/self/io");
  std::string key;
  long value = 0;
  while (io >> key >> value)
    if (key == "rchar:")
      return value;
  return -1;
}

} // namespace

TEST_CASE("read_text_file refuses a file one byte over kMaxInputFileBytes") {
  const TempDir dir;
  // A sparse file: the size is what matters, not the disk space. (Reading one at exactly the
  // limit costs seconds and a GiB of memory, so the accepting side is the multi-block case.)
  const fs::path over = dir.path / "over.csv";
  { std::ofstream touch(over); }
  fs::resize_file(over, ppsim::kMaxInputFileBytes + 1);
  const long read_before = bytes_read_by_this_process();
  CHECK_THROWS_WITH_AS(
      read_text_file(over.string(), "cost file"),
      (over.string() + ": the cost file is larger than 1024 MiB, the most ppsim reads").c_str(),
      Error);
  // Refused from its size: not a byte of it was read (/proc/self/io counts every read(2)).
  if (read_before >= 0)
    CHECK(bytes_read_by_this_process() - read_before < 64 * 1024);
}

TEST_CASE("resolve_path joins relative paths to the base directory") {
  CHECK(ppsim::resolve_path("costs.csv", "scenarios") == "scenarios/costs.csv");
  CHECK(ppsim::resolve_path("../data/costs.csv", "scenarios/gpt") == "scenarios/data/costs.csv");
  CHECK(ppsim::resolve_path("./costs.csv", "scenarios/") == "scenarios/costs.csv");
  CHECK(ppsim::resolve_path("/abs/costs.csv", "scenarios") == "/abs/costs.csv");
  CHECK(ppsim::resolve_path("costs.csv", "") == "costs.csv");
  CHECK(ppsim::resolve_path("", "scenarios") == "");
}

TEST_CASE("parent_directory is the folder of a path, empty for a bare name") {
  CHECK(ppsim::parent_directory("scenarios/gpt.toml") == "scenarios");
  CHECK(ppsim::parent_directory("/etc/ppsim/a.toml") == "/etc/ppsim");
  CHECK(ppsim::parent_directory("gpt.toml") == "");
  CHECK(ppsim::parent_directory("/a.toml") == "/");
  // Round trip: a file named relative to its scenario resolves next to it.
  CHECK(ppsim::resolve_path("costs.csv", ppsim::parent_directory("scenarios/gpt.toml")) ==
        "scenarios/costs.csv");
}

namespace {

std::vector<std::string> all_lines(std::string_view text) {
  std::vector<std::string> lines;
  ppsim::TextLines reader(text);
  while (const std::optional<std::string_view> line = reader.next())
    lines.emplace_back(*line);
  return lines;
}

} // namespace

TEST_CASE("TextLines: LF and CRLF, a last line without a newline, a byte-order mark, NUL kept") {
  using Lines = std::vector<std::string>;
  CHECK(all_lines("") == Lines{});
  CHECK(all_lines("\n") == Lines{""});
  CHECK(all_lines("a,b\n1,2\n") == Lines{"a,b", "1,2"});
  CHECK(all_lines("a,b\r\n1,2") == Lines{"a,b", "1,2"});
  CHECK(all_lines("\xEF\xBB\xBFx\n\ny\r") == Lines{"x", "", "y"});
  CHECK(all_lines(std::string_view("a\0b\nc", 5)) == Lines{std::string("a\0b", 3), "c"});
  // No line-length limit of its own: a 20 MB line is one line (the CSV readers once stopped at
  // 16 MiB with an internal error).
  const std::string long_line(20'000'000, 'x');
  const Lines lines = all_lines(long_line + "\nend");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].size() == long_line.size());
  CHECK(lines[1] == "end");
}
