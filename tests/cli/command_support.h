#pragma once
// Runs one command's handler in-process, as `ppsim` runs it (cli::guarded: errors become one
// line and an exit code), and captures its exit code and streams.
#include "cli/commands.h"

#include <ostream>
#include <sstream>
#include <string>

namespace ppsim::testing {

struct Output {
  int code = -1;
  std::string out, err;
};

using Handler = int (*)(const cli::Args &, std::ostream &, std::ostream &);

inline Output run(Handler handler, const cli::Args &args) {
  std::ostringstream out, err;
  const int code = cli::guarded(handler, args, out, err);
  return {code, out.str(), err.str()};
}

} // namespace ppsim::testing
