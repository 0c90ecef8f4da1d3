#include "cli/commands.h"

#include "base/assert.h"
#include "base/error.h"

#include <boost/program_options/errors.hpp>
#include <fmt/format.h>
#include <new>
#include <ostream>
#include <stdexcept>
#include <system_error>

namespace ppsim::cli {
namespace {

// An error is one line of text: control characters from the input (a newline in --set, binary
// garbage from a file) are shown escaped, never echoed raw.
std::string one_line(std::string_view text) {
  std::string shown;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n')
      shown += "\\n";
    else if (c == '\t')
      shown += "\\t";
    else if (byte < 0x20 || byte == 0x7f)
      shown += fmt::format("\\x{:02x}", byte);
    else
      shown += c;
  }
  return shown;
}

} // namespace

int guarded(int (*handler)(const Args &, std::ostream &, std::ostream &), const Args &args,
            std::ostream &out, std::ostream &err, std::string_view command) {
  try {
    return handler(args, out, err);
  } catch (const Error &error) {
    err << fmt::format("ppsim: error: {}\n", one_line(error.what()));
    return kUserError;
  } catch (const boost::program_options::error &error) {
    err << fmt::format("ppsim: error: {}\n", one_line(error.what()));
    return kUserError;
  } catch (const std::bad_alloc &) {
    err << fmt::format("ppsim: error: out of memory while running {} (the system refused an "
                       "allocation; see the size limits in docs/reliability.md)\n",
                       command);
    return kUserError;
  } catch (const std::length_error &) {
    // A container asked for more than the address space holds: the same limit as bad_alloc.
    err << fmt::format("ppsim: error: out of memory while running {} (a table would exceed the "
                       "addressable size; see the size limits in docs/reliability.md)\n",
                       command);
    return kUserError;
  } catch (const std::system_error &error) {
    if (error.code() != std::errc::resource_unavailable_try_again &&
        error.code() != std::errc::not_enough_memory) {
      err << fmt::format("ppsim: internal error: {}\n", one_line(error.what()));
      return kInternalError;
    }
    err << fmt::format("ppsim: error: out of system resources while running {} ({})\n", command,
                       one_line(error.what()));
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
