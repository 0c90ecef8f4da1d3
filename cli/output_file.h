#pragma once
// Output files are written whole or not at all: a temporary file in the same folder, renamed
// over the target once complete (docs/reliability.md, "Outputs"). A path that names one of this
// process's open descriptors (`-`, /dev/stdout, /dev/fd/N, /proc/self/fd/N, or any path to the
// file our standard output or error already is) is written in place to the descriptor.
#include <boost/program_options/variables_map.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim::cli {

/// Writes `content` to `path` atomically; throws Error naming the path on failure.
/// `-` is standard output.
void write_file_atomically(const std::string &path, std::string_view content);

/// Throws the Error write_file_atomically would when `path` cannot be written (its folder is
/// missing or read-only, it is a folder), so a command can refuse before it computes and prints
/// anything. `option` (such as "--svg") names the path in the error when given.
void check_writable(const std::string &path, const std::string &option = "");

/// Whether `path` is written in place to a descriptor, a device, a pipe or a terminal rather
/// than replaced through a temporary file (no journal or lock can sit beside it).
bool is_stream_output(const std::string &path);

/// One writer at a time per output file (a requeued cluster task must not interleave its rows
/// with the first one's journal): an exclusive lock on FILE.lock, held until destruction (or
/// the process's end: the kernel releases it even after a kill), the lock file then removed.
/// A lock taken on a lock file that another holder removed meanwhile is taken again on the
/// file the path now names, so two writers never hold "the" lock at once. Throws Error naming
/// the output when another process holds it.
class OutputLock {
public:
  explicit OutputLock(const std::string &output);
  ~OutputLock();
  OutputLock(const OutputLock &) = delete;
  OutputLock &operator=(const OutputLock &) = delete;

  /// Whether `path` still names the file open on `fd` (the check after each lock).
  static bool names_open_file(const std::string &path, int fd);

private:
  std::string path_;
  int fd_ = -1;
};

/// An output file and the option that named it ("-o", "--svg").
struct OutputPath {
  std::string option;
  std::string path;
};

/// The outputs among `options` (names without dashes, as declared: "svg", "output") that were
/// given, each with its option as the user writes it.
std::vector<OutputPath> given_outputs(const boost::program_options::variables_map &values,
                                      std::initializer_list<const char *> options);

/// The one check every command runs before it computes, writes or prints anything: each output
/// can be written (check_writable), is not (and does not resolve to) one of `inputs`, and no two
/// outputs are the same file. Throws Error naming the option.
void check_outputs(const std::vector<OutputPath> &outputs, const std::vector<std::string> &inputs);

} // namespace ppsim::cli
