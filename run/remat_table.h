#pragma once
// `ppsim remat` for one schedule (docs/remat.md, "Output"): the simple policies and the StageRemat
// ILP under the scenario's cap, computed here so that the command and Python's `ppsim.remat`
// share them; the command prints the table, writes the plan files, or prints remat_table_json.
#include "remat/baselines.h"
#include "remat/stage_remat_ilp.h"
#include "run/run_input.h"

#include <chrono>
#include <string>
#include <vector>

namespace ppsim {

struct RematTable {
  std::string schedule_name;
  IlpForm form = IlpForm::ppsim;
  Scenario scenario;                   ///< with the checkpoint levels the run asks for
  std::vector<RematOutcome> baselines; ///< none, full, selective, greedy
  RematSolution optimum;
  FormInstance solved; ///< what the form solves (the elf form's: split base, lumped timing)

  [[nodiscard]] std::string ilp_name() const { return form == IlpForm::elf ? "ilp-elf" : "ilp"; }
};

/// The baselines and the ILP for `input`'s schedule under its cap; `ilp.time_limit_seconds`
/// bounds everything from `started` on (the ILP gets what the baselines leave). Throws Error
/// before any solve when there is no cap or the model is too large for the form.
RematTable remat_table(const RunInput &input, const IlpOptions &ilp,
                       std::chrono::steady_clock::time_point started);

/// The largest device peak of `schedule` in the checked track's unit (count or bytes).
double largest_peak(const Scenario &scenario, const Schedule &schedule);

/// The table as JSON (docs/remat.md, "--format json"): {"schedule", "p", "m", "v", "cap",
/// "memory_model", "timing", "ilp_form", "policies": [...]}.
std::string remat_table_json(const RematTable &table);

} // namespace ppsim
