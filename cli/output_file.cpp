#include "cli/output_file.h"

#include "base/error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <csignal>
#include <unistd.h>

namespace ppsim::cli {

namespace {

std::string temporary_of(const std::string &path) {
  return fmt::format("{}.tmp{}", path, static_cast<long>(::getpid()));
}

// Where the bytes go: through a symbolic link to its target, so that the link stays a link.
std::filesystem::path resolved(const std::string &path) {
  std::error_code error;
  if (!std::filesystem::is_symlink(path, error)) return path;
  const std::filesystem::path target = std::filesystem::weakly_canonical(path, error);
  return error ? std::filesystem::path(path) : target;
}

// `FILE.tmp<pid>` files left by a process that was killed while writing FILE.
void remove_orphans(const std::filesystem::path &path) {
  std::error_code error;
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : ".";
  const std::string prefix = path.filename().string() + ".tmp";
  for (const auto &entry : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || name.size() == prefix.size()) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) continue;
    if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH)
      std::filesystem::remove(entry.path(), error);
  }
}

} // namespace

void check_writable(const std::string &path) {
  if (path == "-") return; // standard output
  const std::string temporary = temporary_of(resolved(path).string());
  if (!std::ofstream(temporary, std::ios::binary | std::ios::trunc)) {
    throw Error(path, 0, "", fmt::format("cannot write the file: {}", std::strerror(errno)));
  }
  std::remove(temporary.c_str());
}

void write_file_atomically(const std::string &path, std::string_view content) {
  if (path == "-") { // standard output, after whatever the process printed before
    std::fflush(stdout);
    for (std::size_t written = 0; written < content.size();) {
      const ssize_t n = ::write(STDOUT_FILENO, content.data() + written, content.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw Error("-", 0, "", fmt::format("cannot write to standard output: {}", std::strerror(errno)));
      written += static_cast<std::size_t>(n);
    }
    return;
  }
  std::error_code status_error;
  const std::filesystem::file_status status = std::filesystem::status(path, status_error); // through links
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    // A device, a pipe, a terminal (/dev/stdout): written in place, there is nothing to replace.
    std::ofstream file(path, std::ios::binary);
    file.write(content.data(), static_cast<std::streamsize>(content.size()));
    file.flush();
    if (!file) throw Error(path, 0, "", fmt::format("cannot write the file: {}", std::strerror(errno)));
    return;
  }
  const std::filesystem::path target = resolved(path);
  remove_orphans(target);
  const std::string temporary = temporary_of(target.string());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) throw Error(path, 0, "", fmt::format("cannot write the file: {}", std::strerror(errno)));
    file.write(content.data(), static_cast<std::streamsize>(content.size()));
    file.flush();
    if (!file) {
      std::remove(temporary.c_str());
      throw Error(path, 0, "", "cannot write the file");
    }
  }
  std::error_code error;
  // A file replaced keeps its permissions.
  if (std::filesystem::exists(status)) std::filesystem::permissions(temporary, status.permissions(), error);
  std::filesystem::rename(temporary, target, error);
  if (error) {
    std::remove(temporary.c_str());
    throw Error(path, 0, "", fmt::format("cannot write the file: {}", error.message()));
  }
}

} // namespace ppsim::cli
