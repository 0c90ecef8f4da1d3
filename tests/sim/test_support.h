#pragma once
// Shared helpers for the sim tests: build a scenario from a few numbers and run a schedule. The
// inputs are RunInputs (a ScenarioInput and the run's settings), so the tests of run/ start from
// them too.
#include "run/run_input.h"
#include "sim/metrics.h"
#include "sim/schedules/registry.h"

#include <string>
#include <vector>

namespace ppsim::testing {

/// A uniform scenario: p devices, m microbatches, per-stage (per-chunk) F, B, W and latency c,
/// each given as "n" or "n/d" exact strings.
inline RunInput uniform_input(int p, int m, Rational f, Rational b, Rational w,
                              Rational c = {0, 1}, int v = 0) {
  RunInput input;
  input.devices = p;
  input.microbatches = m;
  input.chunks = v;
  input.costs_per_device = false; // the oracles state one chunk's costs
  input.forward = {f};
  input.backward_input = {b};
  input.backward_weight = {w};
  input.latency = c;
  return input;
}

/// Like uniform_input, but each of `stages` stages has its own F, B and W: numerators drawn by
/// `draw()` stage by stage (F, then B, then W), over `denominator`.
template <typename Draw>
RunInput drawn_stage_input(int p, int m, int stages, Rational c, std::int64_t denominator,
                           Draw &&draw) {
  RunInput input = uniform_input(p, m, {1, 1}, {1, 1}, {1, 1}, c);
  input.forward.clear();
  input.backward_input.clear();
  input.backward_weight.clear();
  for (int s = 0; s < stages; ++s) {
    input.forward.push_back({draw(), denominator});
    input.backward_input.push_back({draw(), denominator});
    input.backward_weight.push_back({draw(), denominator});
  }
  return input;
}

/// The scenario registered schedule `name` builds from `input`.
inline Scenario scenario_for(const std::string &name, const ScenarioInput &input) {
  return build_scenario(input, find_schedule(name));
}

/// Byte sizes that make every memory accounting term of remat matter (docs/remat.md: the
/// checkpoint, the W stash, the transient peaks of F, B and W), under a budget of `budget` bytes.
inline void set_accounting_bytes(ScenarioInput &input, double budget) {
  input.memory_model = MemoryModel::bytes;
  input.bytes.activation = {1000};
  input.bytes.kept_after_b = {600};
  input.bytes.checkpoint = {100};
  input.bytes.peak_forward = {80};
  input.bytes.peak_backward_input = {120};
  input.bytes.peak_backward_weight = {40};
  input.budget_bytes = budget;
}

/// A scenario and the schedule a registered generator makes for it.
struct Generated {
  Scenario scenario;
  Schedule schedule;
};

inline Generated generate(const std::string &name, const ScenarioInput &input,
                          const GeneratorOptions &options = {}) {
  const ScheduleInfo &info = find_schedule(name);
  Generated generated;
  generated.scenario = build_scenario(input, info);
  generated.schedule = generate_schedule(info, generated.scenario, options);
  return generated;
}

struct Run {
  Scenario scenario;
  Schedule schedule;
  Simulation simulation;
  /// Times converted to user units for readable oracle checks (exact for the oracles' values).
  [[nodiscard]] double units(Ticks t) const { return scenario.time_scale.to_units(t); }
};

inline Run run_schedule(const std::string &name, const ScenarioInput &input,
                        const GeneratorOptions &options = {}) {
  Run run;
  Generated generated = generate(name, input, options);
  run.scenario = std::move(generated.scenario);
  run.schedule = std::move(generated.schedule);
  run.simulation = simulate(run.scenario, run.schedule, SimulateOptions{true});
  return run;
}

/// Exact ticks of a rational time in a run's scale.
inline Ticks ticks(const Run &run, Rational value) {
  return run.scenario.time_scale.to_ticks(value);
}

} // namespace ppsim::testing
