#include "cli/output_file.h"
#include "base/index.h"

#include "base/error.h"

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <optional>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ppsim::cli {

namespace {

namespace fs = std::filesystem;

std::string temporary_of(const std::string &path) {
  return fmt::format("{}.tmp{}", path, static_cast<long>(::getpid()));
}

// The descriptor a path names by itself: `-` and /dev/stdout (1), /dev/stderr (2), /dev/fd/N,
// /proc/self/fd/N and /proc/<our pid>/fd/N. Opening such a path would reach the file behind
// the descriptor (and a rename would replace a file the shell opened): it is written in place.
std::optional<int> named_descriptor(const std::string &path) {
  if (path == "-")
    return STDOUT_FILENO;
  const std::string normal = fs::path(path).lexically_normal().string();
  if (normal == "/dev/stdout")
    return STDOUT_FILENO;
  if (normal == "/dev/stderr")
    return STDERR_FILENO;
  if (normal == "/dev/stdin")
    return STDIN_FILENO;
  std::string_view number;
  for (const std::string &prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
                                    std::string("/proc/thread-self/fd/"),
                                    fmt::format("/proc/{}/fd/", static_cast<long>(::getpid()))}) {
    if (normal.starts_with(prefix))
      number = std::string_view(normal).substr(prefix.size());
  }
  int descriptor = -1;
  const auto [rest, error] =
      std::from_chars(number.data(), number.data() + number.size(), descriptor);
  if (number.empty() || error != std::errc() || rest != number.data() + number.size() ||
      descriptor < 0)
    return std::nullopt;
  return descriptor;
}

// Where the bytes go: through symbolic links (live or dangling) to their target, so that a link
// stays a link; a link to a descriptor path stops there.
fs::path resolved(const std::string &path) {
  fs::path current = path;
  for (int hop = 0; hop < 40; ++hop) {
    if (named_descriptor(current.string()))
      return current;
    std::error_code error;
    if (!fs::is_symlink(fs::symlink_status(current, error)))
      return current;
    const fs::path target = fs::read_symlink(current, error);
    if (error)
      return current;
    current = target.is_absolute() ? target : current.parent_path() / target;
  }
  throw Error(path, 0, "", "cannot write the file: too many levels of symbolic links");
}

// The descriptor `path` is written to in place: one it names, or our standard output or error
// when the path is the very file (device and inode) they are open on (`>> log` and `-o log`).
std::optional<int> descriptor_of(const std::string &path) {
  const fs::path target = resolved(path);
  if (const std::optional<int> named = named_descriptor(target.string()))
    return named;
  struct stat file {};
  if (::stat(target.c_str(), &file) != 0)
    return std::nullopt;
  for (const int descriptor : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat open {};
    if (::fstat(descriptor, &open) == 0 && open.st_dev == file.st_dev && open.st_ino == file.st_ino)
      return descriptor;
  }
  return std::nullopt;
}

void check_descriptor(const std::string &path, int descriptor) {
  const int flags = ::fcntl(descriptor, F_GETFL);
  if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) {
    throw Error(
        path, 0, "",
        fmt::format("cannot write the file: descriptor {} is not open for writing", descriptor));
  }
}

void write_descriptor(const std::string &path, int descriptor, std::string_view content) {
  check_descriptor(path, descriptor);
  // After whatever the process printed before, in order.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  for (std::size_t written = 0; written < content.size();) {
    const ssize_t n = ::write(descriptor, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      throw Error(path, 0, "",
                  descriptor == STDOUT_FILENO && path == "-"
                      ? fmt::format("cannot write to standard output: {}", std::strerror(errno))
                      : fmt::format("cannot write the file: {}", std::strerror(errno)));
    }
    written += at(n);
  }
}

// `FILE.tmp<pid>` files left by a process that was killed while writing FILE.
void remove_orphans(const fs::path &path) {
  std::error_code error;
  const fs::path folder = path.has_parent_path() ? path.parent_path() : ".";
  const std::string prefix = path.filename().string() + ".tmp";
  for (const auto &entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || name.size() == prefix.size())
      continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9)
      continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH)
      fs::remove(entry.path(), error);
  }
}

// A stable name for a file: its device and inode when it exists, else its absolute path.
std::string identity_of(const std::string &path) {
  const fs::path target = resolved(path);
  struct stat file {};
  if (::stat(target.c_str(), &file) == 0)
    return fmt::format("inode {}:{}", file.st_dev, file.st_ino);
  std::error_code error;
  const fs::path absolute = fs::weakly_canonical(fs::absolute(target, error), error);
  return "path " + (error ? target.lexically_normal().string() : absolute.string());
}

} // namespace

bool is_stream_output(const std::string &path) {
  if (descriptor_of(path))
    return true;
  std::error_code error;
  const fs::file_status status = fs::status(path, error); // through links
  return fs::exists(status) && !fs::is_regular_file(status);
}

void check_writable(const std::string &path, const std::string &option) {
  const auto fail = [&](const std::string &sentence) { throw Error(path, 0, option, sentence); };
  if (path.empty())
    fail("expected a file name");
  try {
    if (const std::optional<int> descriptor = descriptor_of(path)) {
      check_descriptor(path, *descriptor);
      return;
    }
  } catch (const Error &error) {
    fail(error.sentence());
  }
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (fs::is_directory(status))
    fail("cannot write the file: it is a folder");
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // A device, a pipe or a terminal, opened in place; checked without writing to it.
    if (::access(path.c_str(), W_OK) != 0)
      fail(fmt::format("cannot write the file: {}", std::strerror(errno)));
    return;
  }
  const std::string temporary = temporary_of(resolved(path).string());
  if (!std::ofstream(temporary, std::ios::binary | std::ios::trunc)) {
    fail(fmt::format("cannot write the file: {}", std::strerror(errno)));
  }
  std::remove(temporary.c_str());
}

void write_file_atomically(const std::string &path, std::string_view content) {
  if (const std::optional<int> descriptor = descriptor_of(path)) {
    write_descriptor(path, *descriptor, content);
    return;
  }
  std::error_code status_error;
  const fs::file_status status = fs::status(path, status_error); // through links
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    if (fs::is_directory(status))
      throw Error(path, 0, "", "cannot write the file: it is a folder");
    // A device, a pipe, a terminal: written in place, there is nothing to replace.
    std::ofstream file(path, std::ios::binary);
    file.write(content.data(), static_cast<std::streamsize>(content.size()));
    file.flush();
    if (!file)
      throw Error(path, 0, "", fmt::format("cannot write the file: {}", std::strerror(errno)));
    return;
  }
  const fs::path target = resolved(path); // a dangling link's target is created, the link kept
  remove_orphans(target);
  const std::string temporary = temporary_of(target.string());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file)
      throw Error(path, 0, "", fmt::format("cannot write the file: {}", std::strerror(errno)));
    file.write(content.data(), static_cast<std::streamsize>(content.size()));
    file.flush();
    if (!file) {
      std::remove(temporary.c_str());
      throw Error(path, 0, "", "cannot write the file");
    }
  }
  std::error_code error;
  // A file replaced keeps its permissions.
  if (fs::exists(status))
    fs::permissions(temporary, status.permissions(), error);
  fs::rename(temporary, target, error);
  if (error) {
    std::remove(temporary.c_str());
    throw Error(path, 0, "", fmt::format("cannot write the file: {}", error.message()));
  }
}

std::vector<OutputPath> given_outputs(const boost::program_options::variables_map &values,
                                      std::initializer_list<const char *> options) {
  std::vector<OutputPath> outputs;
  for (const std::string name : options) {
    if (!values.count(name))
      continue;
    outputs.push_back({name == "output" ? "-o" : "--" + name, values[name].as<std::string>()});
  }
  return outputs;
}

void check_outputs(const std::vector<OutputPath> &outputs, const std::vector<std::string> &inputs) {
  std::vector<std::pair<std::string, const OutputPath *>> seen; // identity -> output
  for (const OutputPath &output : outputs) {
    check_writable(output.path, output.option);
    if (is_stream_output(output.path))
      continue; // written in place: two may share a terminal
    const std::string identity = identity_of(output.path);
    for (const std::string &input : inputs) {
      if (input.empty() || input == "-")
        continue;
      if (identity_of(input) == identity) {
        throw Error(output.path, 0, output.option,
                    fmt::format("is the input file {}; write the output to another file", input));
      }
    }
    for (const auto &[other, named] : seen) {
      if (other == identity) {
        throw Error(
            output.path, 0, output.option,
            fmt::format("is also the output of {}; give each output its own file", named->option));
      }
    }
    seen.emplace_back(identity, &output);
  }
}

OutputLock::OutputLock(const std::string &output) : path_(output + ".lock") {
  // A holder removes the lock file before it unlocks: a lock won on the removed file is no lock
  // (the next writer creates and locks a new one), so take it again on what the path names.
  // Each retry means another writer finished meanwhile; a handful always suffices.
  for (int attempt = 0; attempt < 64; ++attempt) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw Error(path_, 0, "", fmt::format("cannot create the lock file: {}", std::strerror(errno)));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw Error(output, 0, "",
                  "another sweep is writing this output (it holds " + path_ +
                      "); wait for it or use another -o");
    }
    if (names_open_file(path_, fd_))
      return;
    ::close(fd_);
  }
  throw Error(output, 0, "", "the lock file " + path_ + " keeps being replaced; try again");
}

OutputLock::~OutputLock() {
  std::error_code ignored;
  std::filesystem::remove(path_, ignored); // while still held: see the constructor
  ::close(fd_);
}

bool OutputLock::names_open_file(const std::string &path, int fd) {
  struct stat named {};
  struct stat open {};
  return ::stat(path.c_str(), &named) == 0 && ::fstat(fd, &open) == 0 &&
         named.st_dev == open.st_dev && named.st_ino == open.st_ino;
}

} // namespace ppsim::cli
