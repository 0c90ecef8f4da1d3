#include "run/model_costs.h"

#include "base/error.h"

#include <fmt/format.h>

namespace ppsim {

std::shared_ptr<const CostFile> run_costs(const RunInput &input) {
  if (input.costs_file.empty())
    return nullptr;
  if (input.loaded_costs && input.loaded_costs->source_name == input.costs_file)
    return input.loaded_costs;
  try {
    return std::make_shared<const CostFile>(read_cost_file(input.costs_file));
  } catch (const Error &error) {
    // A file that cannot be opened is the scenario's field at fault: name where it was set.
    if (error.file() != input.costs_file || error.line() != 0)
      throw;
    input.fail("model.costs_file", fmt::format("{}: {}", input.costs_file, error.sentence()));
  }
}

void load_cost_file(RunInput &input) { input.loaded_costs = run_costs(input); }

std::vector<std::vector<CostRow>> stage_layers(const CostFile &file,
                                               const std::vector<int> &layers_per_stage) {
  std::vector<std::vector<CostRow>> stages;
  auto next = file.rows.begin();
  for (const int count : layers_per_stage) {
    stages.emplace_back(next, next + count);
    next += count;
  }
  return stages;
}

} // namespace ppsim
