#include "cli/output_file.h"

#include "sim/error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <unistd.h>

namespace ppsim::cli {

namespace {

std::string temporary_of(const std::string &path) {
  return fmt::format("{}.tmp{}", path, static_cast<long>(::getpid()));
}

} // namespace

void check_writable(const std::string &path) {
  const std::string temporary = temporary_of(path);
  if (!std::ofstream(temporary, std::ios::binary | std::ios::trunc)) {
    throw Error(path, 0, "", fmt::format("cannot write the file: {}", std::strerror(errno)));
  }
  std::remove(temporary.c_str());
}

void write_file_atomically(const std::string &path, std::string_view content) {
  const std::string temporary = temporary_of(path);
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
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::remove(temporary.c_str());
    throw Error(path, 0, "", fmt::format("cannot write the file: {}", error.message()));
  }
}

} // namespace ppsim::cli
