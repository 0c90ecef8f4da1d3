// `ppsim export --to torch-csv`: a generated schedule in PyTorch's CSV format.
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/scenario_options.h"

#include "sim/error.h"
#include "sim/io/run_setup.h"
#include "sim/io/torch_csv.h"

#include <fmt/format.h>
#include <ostream>

namespace ppsim::cli {
namespace po = boost::program_options;

int run_export(const Args &args, std::ostream &out, std::ostream &err) {
  po::options_description options("ppsim export [SCENARIO.toml] --to torch-csv [options]");
  options.add_options()("help,h", "show this help")(
      "to", po::value<std::string>()->default_value("torch-csv"), "output format: torch-csv")(
      "output,o", po::value<std::string>()->value_name("FILE"), "write to FILE instead of stdout");
  add_scenario_options(options);
  po::positional_options_description positional;
  add_scenario_positional(options, positional);
  const po::variables_map values = parse_command(args, options, positional);
  if (values.count("help")) {
    out << options << "\n";
    return kOk;
  }
  if (values["to"].as<std::string>() != "torch-csv") {
    throw Error("", 0, "--to", fmt::format("expected torch-csv, got \"{}\"", values["to"].as<std::string>()));
  }
  const PreparedRun run = prepare_run(scenario_from_options(values));
  const TorchCsvExport exported = write_torch_csv(run.scenario, run.schedule);
  for (const std::string &warning : exported.warnings) err << fmt::format("ppsim: warning: {}\n", warning);
  if (values.count("output")) {
    write_file_atomically(values["output"].as<std::string>(), exported.text);
  } else {
    out << exported.text;
  }
  return kOk;
}

} // namespace ppsim::cli
