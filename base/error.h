#pragma once
// The one exception type for user errors (CONVENTIONS: file, line, field and a sentence).
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ppsim {

/// A user error: bad input, impossible parameters, an order that cannot run. The CLI prints
/// `what()` on one line and exits 1. Internal failures are not Errors (see assert.h).
class Error : public std::runtime_error {
public:
  /// `file` and `field` may be empty and `line` 0 when they do not apply.
  Error(std::string file, int line, std::string field, const std::string &sentence);
  /// An error with no location (for example a generator's constraint on p and m).
  explicit Error(const std::string &sentence) : Error("", 0, "", sentence) {}

  [[nodiscard]] const std::string &file() const { return file_; }
  [[nodiscard]] int line() const { return line_; }
  [[nodiscard]] const std::string &field() const { return field_; }
  /// The sentence alone, without the location prefix.
  [[nodiscard]] const std::string &sentence() const { return sentence_; }

private:
  std::string file_;
  int line_;
  std::string field_;
  std::string sentence_;
};

/// Returns the registry name closest to `name` by edit distance, or "" when none is close (or
/// `name` is longer than 256 characters).
std::string closest_name(const std::string &name, const std::vector<std::string> &candidates);

/// A text of an input as a message echoes it: whole up to 80 characters, else its first 80, "..."
/// and its length ("... (5000 characters)"), so that no message repeats a huge cell or name.
std::string cut_for_message(std::string_view text);

/// The one sentence for a name that is not one of `candidates`: "unknown WHAT 'name', did you
/// mean 'x'?" when one is close, else "unknown WHAT 'name'" followed by `otherwise` (a hint such
/// as " (see 'ppsim schedules')"; empty: nothing). A name past 80 characters is shown cut, with
/// its length.
std::string unknown_name(std::string_view what, const std::string &name,
                         const std::vector<std::string> &candidates,
                         std::string_view otherwise = "");

} // namespace ppsim
