#pragma once
// The path every run-producing command shares (simulate, compare, sweep): scenario input ->
// scenario + schedule -> recomputation policy -> simulation, and the bounds that go beside it.
#include "bounds/analyzer.h"
#include "sim/io/run_setup.h"
#include "sim/metrics.h"

namespace ppsim::cli {

/// Microbatches each device holds at its peak under the input's schedule, measured on a run of
/// the even split (see run_pipeline.cpp); what the partition DP budgets each stage for.
std::vector<int> measured_in_flight(const ScenarioInput &input);

/// prepare_run plus the input's recomputation policy (remat.policy / --remat).
PreparedRun prepare_policy_run(const ScenarioInput &input);

/// The lower bounds for a prepared run: the generator's backward form and closed form, or for an
/// imported schedule the form its ops use.
BoundsReport bounds_for_run(const ScenarioInput &input, const PreparedRun &run);

} // namespace ppsim::cli
