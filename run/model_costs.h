#pragma once
// The cost file of a run (docs/profiler.md, "The cost file"), read once per command and shared
// by every run made from one RunInput; and its layers grouped into a run's stages. Used by
// run/prepare (the split and the stage sums) and run/policy (checkpoint levels).
#include "costs/cost_file.h"
#include "run/run_input.h"

#include <memory>
#include <vector>

namespace ppsim {

/// The input's costs: `loaded_costs` when it holds model.costs_file at pipeline.microbatch_size,
/// else read now; null without model.costs_file. Several files are read at the microbatch size
/// (costs/microbatch_sizes.h), which they then need; one file is read as it is, at its own size
/// (a size given must be the one its metadata records). Throws Error naming the file or the
/// field at fault.
std::shared_ptr<const CostFile> run_costs(const RunInput &input);

/// Reads model.costs_file into `input.loaded_costs`, once for every run made from `input`: a
/// command that ranks many runs calls it first, so a missing or bad cost file is one error line
/// naming it rather than a row per run.
void load_cost_file(RunInput &input);

/// The input's costs as messages name them, and the name of the CostFile run_costs returns:
/// "a.json", or "a.json and b.json at microbatch size 2".
std::string costs_source(const RunInput &input);

/// The cost file's layers grouped into stages of the given sizes (a prepared run's split,
/// Scenario::stage_layers).
std::vector<std::vector<CostRow>> stage_layers(const CostFile &file,
                                               const std::vector<int> &layers_per_stage);

} // namespace ppsim
