#pragma once
// Reading whole input files, with the one error every reader reports when it cannot.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ppsim {

/// The largest input file ppsim reads (scenario, sweep, cost, schedule, plan and results files).
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{1} << 30;

/// The content of `path`; throws Error "PATH: cannot open the WHAT" (e.g. "scenario file"),
/// "PATH: is a directory, not a WHAT", or when it is larger than kMaxInputFileBytes.
std::string read_text_file(const std::string &path, std::string_view what);

/// `text` without leading and trailing `characters` (by default blanks and a CRLF's carriage
/// return): the one trim of every reader.
std::string_view trim(std::string_view text, std::string_view characters = " \t\r");

/// The lines of a text already in memory, as views into it: split at '\n', a CRLF's carriage
/// return and a leading UTF-8 byte-order mark dropped, a last line without '\n' kept. The one
/// line splitter of the CSV readers (cost, PyTorch schedule and nsys files): no copy, no buffer,
/// no line-length limit beyond the file's.
class TextLines {
public:
  explicit TextLines(std::string_view text);
  /// The next line, or nullopt after the last.
  std::optional<std::string_view> next();

private:
  std::string_view rest_;
};

/// `path` relative to `base_directory` unless it is absolute or either is empty.
std::string resolve_path(const std::string &path, const std::string &base_directory);

/// The folder holding `path` ("" for a bare file name), for resolve_path.
std::string parent_directory(const std::string &path);

} // namespace ppsim
