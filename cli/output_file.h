#pragma once
// Output files are written whole or not at all: a temporary file in the same folder, renamed
// over the target once complete.
#include <string>
#include <string_view>

namespace ppsim::cli {

/// Writes `content` to `path` atomically; throws Error naming the path on failure.
/// `-` is standard output.
void write_file_atomically(const std::string &path, std::string_view content);

/// Throws the Error write_file_atomically would when `path` cannot be written (its folder is
/// missing or read-only), so a command can refuse before it computes and prints anything.
void check_writable(const std::string &path);

} // namespace ppsim::cli
