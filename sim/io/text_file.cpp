#include "sim/io/text_file.h"

#include "sim/error.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace ppsim {

std::string read_text_file(const std::string &path, std::string_view what) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(path, 0, "", fmt::format("cannot open the {}", what));
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string resolve_path(const std::string &path, const std::string &base_directory) {
  if (path.empty() || base_directory.empty() || std::filesystem::path(path).is_absolute()) return path;
  return (std::filesystem::path(base_directory) / path).lexically_normal().string();
}

std::string parent_directory(const std::string &path) {
  return std::filesystem::path(path).parent_path().string();
}

} // namespace ppsim
