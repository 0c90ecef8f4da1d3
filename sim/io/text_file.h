#pragma once
// Reading whole input files, with the one error every reader reports when it cannot.
#include <string>
#include <string_view>

namespace ppsim {

/// The content of `path`; throws Error "PATH: cannot open the WHAT" (e.g. "scenario file").
std::string read_text_file(const std::string &path, std::string_view what);

/// `path` relative to `base_directory` unless it is absolute or either is empty.
std::string resolve_path(const std::string &path, const std::string &base_directory);

/// The folder holding `path` ("" for a bare file name), for resolve_path.
std::string parent_directory(const std::string &path);

} // namespace ppsim
