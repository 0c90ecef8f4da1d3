#include "base/text_file.h"
#include "base/index.h"

#include "base/error.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>

namespace ppsim {

std::string read_text_file(const std::string &path, std::string_view what) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw Error(path, 0, "", fmt::format("is a directory, not a {}", what));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file)
    throw Error(path, 0, "", fmt::format("cannot open the {}", what));
  const auto too_large = [&] {
    return Error(path, 0, "",
                 fmt::format("the {} is larger than {} MiB, the most ppsim reads", what,
                             kMaxInputFileBytes >> 20));
  };
  // A regular file's size is known before reading: refused without reading a byte.
  if (std::filesystem::is_regular_file(path, error) &&
      std::filesystem::file_size(path, error) > kMaxInputFileBytes && !error)
    throw too_large();
  // Others (a pipe, /dev/zero) are read in blocks up to the limit, so that they are refused in
  // one line instead of filling memory.
  std::string text;
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  for (;;) {
    const std::size_t had = text.size();
    text.resize(had + kBlock);
    file.read(text.data() + had, static_cast<std::streamsize>(kBlock));
    text.resize(had + at(file.gcount()));
    if (text.size() > kMaxInputFileBytes)
      throw too_large();
    if (file.bad())
      throw Error(path, 0, "", fmt::format("cannot read the {}", what));
    if (!file)
      break;
  }
  return text;
}

std::string resolve_path(const std::string &path, const std::string &base_directory) {
  if (path.empty() || base_directory.empty() || std::filesystem::path(path).is_absolute())
    return path;
  return (std::filesystem::path(base_directory) / path).lexically_normal().string();
}

std::string parent_directory(const std::string &path) {
  return std::filesystem::path(path).parent_path().string();
}

TextLines::TextLines(std::string_view text) : rest_(text) {
  if (rest_.starts_with("\xEF\xBB\xBF"))
    rest_.remove_prefix(3);
}

std::optional<std::string_view> TextLines::next() {
  if (rest_.empty())
    return std::nullopt;
  const std::size_t end = rest_.find('\n');
  std::string_view line = rest_.substr(0, end);
  rest_.remove_prefix(end == std::string_view::npos ? rest_.size() : end + 1);
  if (line.ends_with('\r'))
    line.remove_suffix(1);
  return line;
}

std::string_view trim(std::string_view text, std::string_view characters) {
  const std::size_t first = text.find_first_not_of(characters);
  if (first == std::string_view::npos)
    return {};
  return text.substr(first, text.find_last_not_of(characters) - first + 1);
}

} // namespace ppsim
