#include "run/model_costs.h"

#include "base/error.h"
#include "costs/microbatch_sizes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ppsim {

namespace {

CostFile read_named_file(const RunInput &input, const std::string &path) {
  try {
    return read_cost_file(path);
  } catch (const Error &error) {
    // A file that cannot be opened is the scenario's field at fault: name where it was set.
    if (error.file() != path || error.line() != 0)
      throw;
    input.fail("model.costs_file", fmt::format("{}: {}", path, error.sentence()));
  }
}

CostFile one_file(const RunInput &input) {
  CostFile file = read_named_file(input, input.costs_files.front());
  const std::int64_t recorded = file.metadata.b;
  if (input.microbatch_size > 0 && recorded != input.microbatch_size) {
    input.fail("pipeline.microbatch_size",
               recorded <= 0
                   ? fmt::format("{} records no microbatch size (CSV files have none, ppsim "
                                 "profile import records it with --batch), so the size cannot "
                                 "select its costs: give JSON cost files that record it, one per "
                                 "size (model.costs_file = [...])",
                                 file.source_name)
                   : fmt::format("{} was profiled at microbatch size {}, not {}: kernels are not "
                                 "linear in the size; profile at {}, or give files at sizes "
                                 "around it (model.costs_file = [...])",
                                 file.source_name, recorded, input.microbatch_size,
                                 input.microbatch_size));
  }
  return file;
}

CostFile sized_files(const RunInput &input) {
  std::vector<CostFile> files;
  for (const std::string &path : input.costs_files)
    files.push_back(read_named_file(input, path));
  if (input.microbatch_size <= 0) {
    std::vector<std::int64_t> sizes;
    for (const CostFile &file : files)
      sizes.push_back(file.metadata.b);
    input.fail("model.costs_file",
               fmt::format("{} cost files are given (microbatch sizes {}): set "
                           "pipeline.microbatch_size to the size the run uses",
                           files.size(), fmt::join(sizes, ", ")));
  }
  try {
    return cost_file_at_size(files, input.microbatch_size);
  } catch (const Error &error) {
    if (!error.file().empty())
      throw;
    input.fail("pipeline.microbatch_size", error.sentence());
  }
}

} // namespace

std::shared_ptr<const CostFile> run_costs(const RunInput &input) {
  if (input.costs_files.empty()) {
    if (input.microbatch_size > 0) {
      input.fail("pipeline.microbatch_size",
                 "selects the costs among cost files profiled at several sizes "
                 "(model.costs_file); the times given in the scenario are for its microbatches "
                 "as they are");
    }
    return nullptr;
  }
  // One file is named by its path alone: loaded at another size it is checked again.
  if (input.loaded_costs && input.loaded_costs->source_name == costs_source(input) &&
      (input.microbatch_size == 0 || input.loaded_costs->metadata.b == input.microbatch_size))
    return input.loaded_costs;
  CostFile file = input.costs_files.size() == 1 ? one_file(input) : sized_files(input);
  file.source_name = costs_source(input);
  return std::make_shared<const CostFile>(std::move(file));
}

std::string costs_source(const RunInput &input) {
  if (input.costs_files.size() == 1)
    return input.costs_files.front();
  return fmt::format("{} at microbatch size {}", fmt::join(input.costs_files, " and "),
                     input.microbatch_size);
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
