#include "sim/schedules/registry.h"

#include "base/error.h"
#include "sim/schedules/families.h"

#include <fmt/format.h>

namespace ppsim {

const std::vector<ScheduleInfo> &schedule_registry() {
  static const std::vector<ScheduleInfo> registry{
      {.name = "gpipe",
       .description =
           "all forwards, then all backwards (GPipe; AFAB with several stages per device)",
       .placement = PlacementKind::round_robin,
       .default_chunks = 1,
       .split_backward = false,
       .generate = schedules::gpipe,
       .closed_form = schedules::gpipe_closed_form},
      {.name = "1f1b",
       .description = "one forward one backward after a p-1-r warm-up (PipeDream-flush, Megatron)",
       .placement = PlacementKind::single_wave,
       .default_chunks = 1,
       .split_backward = false,
       .generate = schedules::one_f_one_b,
       .closed_form = schedules::one_f_one_b_closed_form,
       .in_flight = schedules::one_f_one_b_in_flight},
      {.name = "1f1b-split",
       .description = "1F1B order with B and W as separate ops, W right after its B",
       .placement = PlacementKind::single_wave,
       .default_chunks = 1,
       .split_backward = true,
       .generate = schedules::one_f_one_b_split,
       .closed_form = schedules::one_f_one_b_split_closed_form,
       .in_flight = schedules::one_f_one_b_in_flight},
      {.name = "interleaved-1f1b",
       .description = "Megatron interleaved 1F1B: v round-robin chunks, microbatch groups of g",
       .placement = PlacementKind::round_robin,
       .default_chunks = 2,
       .split_backward = false,
       .generate = schedules::interleaved_1f1b,
       .precondition = schedules::interleaved_1f1b_precondition,
       .closed_form = schedules::interleaved_1f1b_closed_form},
      {.name = "looped-bfs",
       .description =
           "all forwards chunk by chunk, then all backwards in reverse (PyTorch looped BFS)",
       .placement = PlacementKind::round_robin,
       .default_chunks = 2,
       .split_backward = false,
       .generate = schedules::looped_bfs},
      {.name = "interleaved-zb",
       .description = "interleaved zero bubble: interleaved 1F1B's rounds, W deferred r steps "
                      "(PyTorch ScheduleInterleavedZeroBubble)",
       .placement = PlacementKind::round_robin,
       .default_chunks = 2,
       .split_backward = true,
       .generate = schedules::interleaved_zb,
       .precondition = schedules::interleaved_zb_precondition},
      {.name = "hanayo",
       .description =
           "Hanayo wave-like pipeline, v/2 waves on the V placement (ELF reference order)",
       .placement = PlacementKind::v_shape,
       .default_chunks = 2,
       .split_backward = false,
       .generate = schedules::hanayo,
       .precondition = schedules::hanayo_precondition,
       .closed_form = schedules::hanayo_closed_form},
      {.name = "zb-h1",
       .description = "zero-bubble handcrafted H1: 1F1B memory, W deferred to fill the drain",
       .placement = PlacementKind::single_wave,
       .default_chunks = 1,
       .split_backward = true,
       .generate = schedules::zb_h1,
       .closed_form = schedules::zb_h1_closed_form,
       .in_flight = schedules::zb_h1_in_flight},
      {.name = "zb-h2",
       .description = "zero-bubble handcrafted H2: 2(p-1-r) warm-up forwards, zero span bubble",
       .placement = PlacementKind::single_wave,
       .default_chunks = 1,
       .split_backward = true,
       .generate = schedules::zb_h2,
       .closed_form = schedules::zb_h2_closed_form,
       .in_flight = schedules::zb_h2_in_flight},
      {.name = "zb-1p",
       .description =
           "zero-bubble automatic heuristic with cap p activations per stage (1F1B memory)",
       .placement = PlacementKind::single_wave,
       .default_chunks = 1,
       .split_backward = true,
       .generate = schedules::zb_1p,
       .precondition = schedules::zb_auto_precondition},
      {.name = "zb-2p",
       .description = "zero-bubble automatic heuristic with cap 2p activations per stage",
       .placement = PlacementKind::single_wave,
       .default_chunks = 1,
       .split_backward = true,
       .generate = schedules::zb_2p,
       .precondition = schedules::zb_auto_precondition},
      {.name = "zb-auto",
       .description =
           "zero-bubble automatic heuristic with cap --K activations per stage (none: 3m)",
       .placement = PlacementKind::single_wave,
       .default_chunks = 1,
       .split_backward = true,
       .generate = schedules::zb_auto,
       .precondition = schedules::zb_auto_precondition},
      {.name = "zb-v",
       .description =
           "zero-bubble V schedule, fixed rule (PyTorch ScheduleZBVZeroBubble), 1F1B memory",
       .placement = PlacementKind::v_shape,
       .default_chunks = 2,
       .split_backward = true,
       .generate = schedules::zb_v,
       .precondition = schedules::zb_v_precondition,
       .closed_form = schedules::zb_v_closed_form},
      {.name = "zb-v-greedy",
       .description = "zero-bubble V placement by the greedy heuristic with cap --K (default p)",
       .placement = PlacementKind::v_shape,
       .default_chunks = 2,
       .split_backward = true,
       .generate = schedules::zb_v_greedy,
       .precondition = schedules::zb_v_greedy_precondition},
      {.name = "v-min",
       .description = "controllable-memory V-Min: about 1/3 of 1F1B's activation memory (PPCM)",
       .placement = PlacementKind::v_shape,
       .default_chunks = 2,
       .split_backward = true,
       .generate = schedules::v_min,
       .precondition = schedules::v_min_precondition},
      {.name = "v-half",
       .description = "controllable-memory V-Half: about 1/2 of 1F1B's activation memory (PPCM)",
       .placement = PlacementKind::v_shape,
       .default_chunks = 2,
       .split_backward = true,
       .generate = schedules::v_half,
       .precondition = schedules::v_half_precondition,
       .in_flight = schedules::v_half_in_flight},
      {.name = "v-auto",
       .description =
           "controllable-memory V schedule by building-block search, cap --K (default p)",
       .placement = PlacementKind::v_shape,
       .default_chunks = 2,
       .split_backward = true,
       .generate = schedules::v_auto,
       .precondition = schedules::v_auto_precondition},
      {.name = "dualpipe",
       .description = "DeepSeek DualPipe: two pipes in opposite directions with overlapped F&B ops",
       .placement = PlacementKind::dual_pipe,
       .default_chunks = 1,
       .split_backward = true,
       .generate = schedules::dualpipe,
       .precondition = schedules::dualpipe_precondition},
      {.name = "dualpipev",
       .description = "DualPipeV: DualPipe folded onto the V placement (PyTorch ScheduleDualPipeV)",
       .placement = PlacementKind::v_shape,
       .default_chunks = 2,
       .split_backward = true,
       .generate = schedules::dualpipev,
       .precondition = schedules::dualpipev_precondition},
      {.name = "allremat-1f1b",
       .description = "1F1B where every device but the last recomputes each forward (fits K = 1)",
       .placement = PlacementKind::single_wave,
       .default_chunks = 1,
       .split_backward = false,
       .generate = schedules::allremat_1f1b,
       .closed_form = schedules::allremat_1f1b_closed_form},
      {.name = "full-remat",
       .description = "AFAB with recomputation on all devices but the last, which runs 1F1B (ELF)",
       .placement = PlacementKind::single_wave,
       .default_chunks = 1,
       .split_backward = false,
       .generate = schedules::full_remat},
  };
  return registry;
}

const ScheduleInfo &find_schedule(const std::string &name) {
  std::vector<std::string> names;
  for (const ScheduleInfo &info : schedule_registry()) {
    if (info.name == name)
      return info;
    names.push_back(info.name);
  }
  throw Error(unknown_name("schedule", name, names, " (see 'ppsim schedules')"));
}

const ScheduleInfo *lookup_schedule(std::string_view name) {
  for (const ScheduleInfo &info : schedule_registry()) {
    if (info.name == name)
      return &info;
  }
  return nullptr;
}

void schedules::enforce(const std::optional<Error> &refusal) {
  if (refusal)
    throw *refusal;
}

std::optional<Error> schedules::two_chunks_refusal(std::string_view schedule,
                                                   const Scenario &scenario) {
  if (scenario.chunks == 2 && scenario.pipes == 1)
    return std::nullopt;
  return Error(fmt::format("schedule '{}' needs exactly 2 stages per device (v = 2), got v = {}",
                           schedule, scenario.chunks));
}

Schedule generate_schedule(const ScheduleInfo &info, const Scenario &scenario,
                           const GeneratorOptions &options) {
  Schedule schedule = info.generate(scenario, options);
  schedule.name = info.name;
  return schedule;
}

} // namespace ppsim
