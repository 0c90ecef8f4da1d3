// `ppsim report`: the ranking of `ppsim compare` as one interactive HTML page (docs/report.md).
// `ppsim report SCENARIO -o FILE [options]` is `ppsim compare SCENARIO --report FILE [options]`.
#include "cli/commands.h"

#include "base/error.h"

#include <ostream>

namespace ppsim::cli {

int run_report(const Args &args, std::ostream &out, std::ostream &err) {
  Args forwarded;
  std::string output;
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (args[k] == "--help" || args[k] == "-h") {
      out << "ppsim report [SCENARIO.toml] -o FILE [options of ppsim compare]\n"
             "  writes the ranking of ppsim compare as one self-contained HTML page "
             "(docs/report.md)\n  -o [ --output ] FILE   the page to write\n\n";
      return run_compare({"--help"}, out, err);
    }
    if (args[k] == "-o" || args[k] == "--output") {
      if (k + 1 == args.size())
        throw Error("", 0, args[k], "expected the file to write the report to");
      output = args[++k];
    } else if (args[k].rfind("--output=", 0) == 0) {
      output = args[k].substr(std::string_view("--output=").size());
    } else {
      forwarded.push_back(args[k]);
    }
  }
  if (output.empty()) {
    throw Error("", 0, "-o",
                "expected the file to write the report to (ppsim report SCENARIO -o report.html)");
  }
  forwarded.insert(forwarded.end(), {"--report", output});
  return run_compare(forwarded, out, err);
}

} // namespace ppsim::cli
