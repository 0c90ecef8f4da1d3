#include "sim/schedules/registry.h"

#include "base/error.h"
#include "sim/schedules/families.h"

#include <fmt/format.h>

namespace ppsim {

const std::vector<ScheduleInfo> &schedule_registry() {
  static const std::vector<ScheduleInfo> registry{
      {"gpipe", "all forwards, then all backwards (GPipe; AFAB with several stages per device)",
       PlacementKind::round_robin, 1, false, schedules::gpipe},
      {"1f1b", "one forward one backward after a p-1-r warm-up (PipeDream-flush, Megatron)",
       PlacementKind::single_wave, 1, false, schedules::one_f_one_b},
      {"1f1b-split", "1F1B order with B and W as separate ops, W right after its B",
       PlacementKind::single_wave, 1, true, schedules::one_f_one_b_split},
      {"interleaved-1f1b", "Megatron interleaved 1F1B: v round-robin chunks, microbatch groups of g",
       PlacementKind::round_robin, 2, false, schedules::interleaved_1f1b},
      {"looped-bfs", "all forwards chunk by chunk, then all backwards in reverse (PyTorch looped BFS)",
       PlacementKind::round_robin, 2, false, schedules::looped_bfs},
      {"interleaved-zb", "interleaved zero bubble: interleaved 1F1B's rounds, W deferred r steps (PyTorch ScheduleInterleavedZeroBubble)",
       PlacementKind::round_robin, 2, true, schedules::interleaved_zb},
      {"hanayo", "Hanayo wave-like pipeline, v/2 waves on the V placement (ELF reference order)",
       PlacementKind::v_shape, 2, false, schedules::hanayo},
      {"zb-h1", "zero-bubble handcrafted H1: 1F1B memory, W deferred to fill the drain",
       PlacementKind::single_wave, 1, true, schedules::zb_h1},
      {"zb-h2", "zero-bubble handcrafted H2: 2(p-1-r) warm-up forwards, zero span bubble",
       PlacementKind::single_wave, 1, true, schedules::zb_h2},
      {"zb-1p", "zero-bubble automatic heuristic with cap p activations per stage (1F1B memory)",
       PlacementKind::single_wave, 1, true, schedules::zb_1p},
      {"zb-2p", "zero-bubble automatic heuristic with cap 2p activations per stage",
       PlacementKind::single_wave, 1, true, schedules::zb_2p},
      {"zb-auto", "zero-bubble automatic heuristic with cap --K activations per stage (none: 3m)",
       PlacementKind::single_wave, 1, true, schedules::zb_auto},
      {"zb-v", "zero-bubble V schedule, fixed rule (PyTorch ScheduleZBVZeroBubble), 1F1B memory",
       PlacementKind::v_shape, 2, true, schedules::zb_v},
      {"zb-v-greedy", "zero-bubble V placement by the greedy heuristic with cap --K (default p)",
       PlacementKind::v_shape, 2, true, schedules::zb_v_greedy},
      {"v-min", "controllable-memory V-Min: about 1/3 of 1F1B's activation memory (PPCM)",
       PlacementKind::v_shape, 2, true, schedules::v_min},
      {"v-half", "controllable-memory V-Half: about 1/2 of 1F1B's activation memory (PPCM)",
       PlacementKind::v_shape, 2, true, schedules::v_half},
      {"v-auto", "controllable-memory V schedule by building-block search, limit --K (default p)",
       PlacementKind::v_shape, 2, true, schedules::v_auto},
      {"dualpipe", "DeepSeek DualPipe: two pipes in opposite directions with overlapped F&B ops",
       PlacementKind::dual_pipe, 1, true, schedules::dualpipe},
      {"dualpipev", "DualPipeV: DualPipe folded onto the V placement (PyTorch ScheduleDualPipeV)",
       PlacementKind::v_shape, 2, true, schedules::dualpipev},
      {"allremat-1f1b", "1F1B where every device but the last recomputes each forward (fits K = 1)",
       PlacementKind::single_wave, 1, false, schedules::allremat_1f1b},
      {"full-remat", "AFAB with recomputation on all devices but the last, which runs 1F1B (ELF)",
       PlacementKind::single_wave, 1, false, schedules::full_remat},
  };
  return registry;
}

const ScheduleInfo &find_schedule(const std::string &name) {
  std::vector<std::string> names;
  for (const ScheduleInfo &info : schedule_registry()) {
    if (info.name == name) return info;
    names.push_back(info.name);
  }
  const std::string suggestion = closest_name(name, names);
  if (suggestion.empty()) {
    throw Error(fmt::format("unknown schedule '{}' (see 'ppsim schedules')", name));
  }
  throw Error(fmt::format("unknown schedule '{}', did you mean '{}'?", name, suggestion));
}

Schedule generate_schedule(const ScheduleInfo &info, const Scenario &scenario,
                           const GeneratorOptions &options) {
  Schedule schedule = info.generate(scenario, options);
  schedule.name = info.name;
  return schedule;
}

} // namespace ppsim
