#include "cli/commands.h"

#include "base/assert.h"
#include "base/error.h"

#include <boost/program_options/errors.hpp>
#include <fmt/format.h>
#include <ostream>

namespace ppsim::cli {
namespace {

// An error is one line of text: control characters from the input (a newline in --set, binary
// garbage from a file) are shown escaped, never echoed raw.
std::string one_line(std::string_view text) {
  std::string shown;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') shown += "\\n";
    else if (c == '\t') shown += "\\t";
    else if (byte < 0x20 || byte == 0x7f) shown += fmt::format("\\x{:02x}", byte);
    else shown += c;
  }
  return shown;
}

} // namespace

int guarded(int (*handler)(const Args &, std::ostream &, std::ostream &), const Args &args,
            std::ostream &out, std::ostream &err) {
  try {
    return handler(args, out, err);
  } catch (const Error &error) {
    err << fmt::format("ppsim: error: {}\n", one_line(error.what()));
    return kUserError;
  } catch (const boost::program_options::error &error) {
    err << fmt::format("ppsim: error: {}\n", one_line(error.what()));
    return kUserError;
  } catch (const InternalError &error) {
    err << fmt::format("ppsim: internal error: {}\n", one_line(error.what()));
    return kInternalError;
  } catch (const std::exception &error) {
    err << fmt::format("ppsim: internal error: {}\n", one_line(error.what()));
    return kInternalError;
  }
}

} // namespace ppsim::cli
