#pragma once
// Output files are written whole or not at all: a temporary file in the same folder, renamed
// over the target once complete.
#include <string>
#include <string_view>

namespace ppsim::cli {

/// Writes `content` to `path` atomically; throws Error naming the path on failure.
void write_file_atomically(const std::string &path, std::string_view content);

} // namespace ppsim::cli
