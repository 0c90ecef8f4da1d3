// `ppsim export --to torch-csv`: a generated schedule in PyTorch's CSV format.
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/scenario_options.h"

#include "base/error.h"
#include "run/prepare.h"
#include "sim/io/torch_csv.h"

#include <fmt/format.h>
#include <ostream>

namespace ppsim::cli {
namespace po = boost::program_options;

int run_export(const Args &args, std::ostream &out, std::ostream &err) {
  po::options_description options("ppsim export [SCENARIO.toml] --to torch-csv [options]");
  options.add_options()("to", po::value<std::string>()->default_value("torch-csv"),
                        "output format: torch-csv")(
      "output,o", po::value<std::string>()->value_name("FILE"), "write to FILE instead of stdout")(
      "torch-spacing", po::bool_switch(),
      "insert PyTorch's idle cells (unit-step lock-step replay)");
  const auto parsed = parse_scenario_command(args, options, out);
  if (!parsed)
    return kOk;
  const po::variables_map &values = *parsed;
  checked_choice(values, "to", {"torch-csv"});
  const RunInput input = scenario_from_options(values);
  check_outputs(given_outputs(values, {"output"}), scenario_input_files(values, input));
  const PreparedRun run = prepare_run(input);
  const TorchCsvExport exported =
      write_torch_csv(run.scenario, run.schedule, values["torch-spacing"].as<bool>());
  for (const std::string &warning : exported.warnings)
    err << fmt::format("ppsim: warning: {}\n", warning);
  if (values.count("output")) {
    write_file_atomically(values["output"].as<std::string>(), exported.text);
  } else {
    out << exported.text;
  }
  return kOk;
}

} // namespace ppsim::cli
