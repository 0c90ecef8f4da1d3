#include "cli/commands.h"

#include "sim/assert.h"
#include "sim/error.h"

#include <boost/program_options/errors.hpp>
#include <fmt/format.h>
#include <ostream>

namespace ppsim::cli {

int guarded(int (*handler)(const Args &, std::ostream &, std::ostream &), const Args &args,
            std::ostream &out, std::ostream &err) {
  try {
    return handler(args, out, err);
  } catch (const Error &error) {
    err << fmt::format("ppsim: error: {}\n", error.what());
    return kUserError;
  } catch (const boost::program_options::error &error) {
    err << fmt::format("ppsim: error: {}\n", error.what());
    return kUserError;
  } catch (const InternalError &error) {
    err << fmt::format("ppsim: internal error: {}\n", error.what());
    return kInternalError;
  } catch (const std::exception &error) {
    err << fmt::format("ppsim: internal error: {}\n", error.what());
    return kInternalError;
  }
}

} // namespace ppsim::cli
