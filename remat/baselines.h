#pragma once
// Remat baselines the ILP is compared with (issue 5; docs/remat.md, "Simple policies"): no remat,
// full forward remat, selective (attention-only) remat and a greedy policy.
#include "remat/plan.h"
#include "sim/metrics.h"
#include "sim/scenario_builder.h"

#include <optional>
#include <string>
#include <vector>

namespace ppsim {

/// docs/remat.md, "Simple policies" `full`: every (s,j) recomputes its forward (R before B/BW)
/// except where `base` runs the backward right after the forward on the same device.
RematPlan full_forward_plan(const Scenario &scenario, const Schedule &base);

/// Selective recomputation (Korthikanti et al., arXiv 2205.05198, section 4.2): only the
/// attention core (QK^T, softmax, dropout, attention over V) is dropped and recomputed. Per
/// layer it stores 5as/(34h+5as) of the activation and costs s/(6h+s) of the forward FLOPs
/// (4bs^2h of 24bsh^2 + 4bs^2h). Defaults: GPT-3 175B, s = 2048, h = 12288, a = 96.
struct SelectiveOptions {
  std::int64_t sequence_length = 2048;
  std::int64_t hidden_size = 12288;
  std::int64_t attention_heads = 96;

  [[nodiscard]] double memory_fraction() const; ///< 5as / (34h + 5as)
  [[nodiscard]] Rational time_fraction() const; ///< s / (6h + s)
};

/// The scenario under selective remat, derived for ppsim: R costs the input's recompute_selective
/// (a cost file's recompute_selective_ms), else time_fraction() of the recompute cost, and a
/// non-storing F keeps selective_act_bytes / act_bytes of the activation, else
/// (1 - memory_fraction()), on every stage. `scenario` is the one built from `input` (its placement
/// is kept). Pair it with selective_plan (R on every (s,j)).
Scenario selective_scenario(const ScenarioInput &input, const Scenario &scenario,
                            const SelectiveOptions &options);
RematPlan selective_plan(const Scenario &scenario);

/// `scenario` (built from `input`, possibly with checkpoint levels) with selective recomputation
/// as one more checkpoint level of every stage (CheckpointLevelMemory::selective: its R and what
/// F keeps are selective_scenario's), so that the remat ILP may choose selective, full or no
/// recomputation per (stage, microbatch). Only where the input measures it
/// (ScenarioInput::measures_selective: a cost file's recompute_selective_ms and
/// activation_bytes_selective): the fractions' defaults describe GPT-3 175B, not the model.
/// Unchanged otherwise.
Scenario with_selective_level(const ScenarioInput &input, const Scenario &scenario);
/// Every (s,j) recomputing at its stage's selective level: the selective policy as a plan of
/// with_selective_level's scenario. Nothing when a stage has no such level.
std::optional<RematPlan> selective_level_plan(const Scenario &scenario);

/// How the greedy breaks ties between options of equal score (equal costs make most of them):
/// the latest (s,j), as the last forward's backward comes last in 1F1B-like orders; or the option
/// whose saving lasts longest in its device's order (until its recomputation's slot), which
/// differs where an (s,j)'s backward follows soon after its forward (the V's second chunk,
/// interleaved orders).
enum class GreedyTies { latest_pair, longest_saving };

/// Greedy policy, derived for ppsim (docs/remat.md, "Output"): walking each device's order,
/// wherever memory is over the cap, turn on the option (R or a level, RW, RBW) of an (s,j) alive
/// there that saves the most memory at that position per unit of added time, ties broken by
/// `ties`, until the position fits. Nothing when no option reduces the excess any more.
std::optional<RematPlan> greedy_plan(const Scenario &scenario, const Schedule &base,
                                     GreedyTies ties);
/// The distinct plans of both tie rules (latest_pair's first), the setup shared.
std::vector<RematPlan> greedy_plans(const Scenario &scenario, const Schedule &base);
/// The faster (replayed_objective) of greedy_plans; the first on a tie.
std::optional<RematPlan> greedy_plan(const Scenario &scenario, const Schedule &base);

/// One policy's plan and its replay.
struct RematOutcome {
  std::string policy; ///< "none", "full", "selective", "greedy", "ilp"
  bool found = false; ///< false: the policy produced no plan (greedy stuck, ILP failed)
  std::string note;   ///< why not found
  Scenario scenario;  ///< the scenario it ran under (selective changes costs)
  RematPlan plan;
  Schedule schedule;
  Simulation simulation;
};

/// Runs none, full, selective and greedy on `base`, the schedule of `scenario` (built from
/// `input`).
std::vector<RematOutcome> run_baselines(const ScenarioInput &input, const Scenario &scenario,
                                        const Schedule &base,
                                        const SelectiveOptions &selective = {});

} // namespace ppsim
