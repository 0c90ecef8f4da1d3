#include "sim/io/timeline_json.h"

#include "base/index.h"
#include "sim/io/memory_steps.h"
#include "sim/io/report.h"

#include <fmt/format.h>
#include <iterator>

namespace ppsim {
namespace {

template <typename... Args>
void append(fmt::memory_buffer &out, fmt::format_string<Args...> format, Args &&...args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

// Appends `"name": [values...]` with one value per element of `items`.
template <typename Items, typename Format>
void append_column(fmt::memory_buffer &out, std::string_view name, const Items &items,
                   Format format) {
  fmt::format_to(std::back_inserter(out), "\"{}\": [", name);
  bool first = true;
  for (const auto &item : items) {
    fmt::format_to(std::back_inserter(out), "{}{}", first ? "" : ",", format(item));
    first = false;
  }
  fmt::format_to(std::back_inserter(out), "]");
}

} // namespace

std::string timeline_json(const Scenario &scenario, const Schedule &schedule,
                          const Simulation &simulation, const BubbleExplanation &explanation) {
  const TimeScale &scale = scenario.time_scale;
  const auto time = [&](Ticks t) { return scale.json(t); };
  std::vector<const Op *> ops;
  std::vector<std::int32_t> device_offsets{0};
  for (const std::vector<Op> &device_ops : schedule.device_ops) {
    for (const Op &op : device_ops)
      ops.push_back(&op);
    device_offsets.push_back(static_cast<std::int32_t>(ops.size()));
  }
  // The curve of the track whose cap is checked (docs/model.md, "Memory models").
  const bool bytes =
      scenario.memory_model == MemoryModel::bytes && scenario.bytes && simulation.bytes.has_value();
  const MemoryTrack &track = bytes ? *scenario.bytes : scenario.activations;
  const MemoryReport &memory = bytes ? *simulation.bytes : simulation.activations;

  fmt::memory_buffer out;
  append(out, "{{\"devices\": {}, \"kinds\": [", schedule.device_count());
  for (int kind = 0; kind < kOpKindCount; ++kind)
    append(out, "{}\"{}\"", kind == 0 ? "" : ",", op_kind_token(static_cast<OpKind>(kind)));
  append(out, "], ");
  append_column(out, "device_offsets", device_offsets, [](std::int32_t e) { return e; });
  append(out, ", ");
  append_column(out, "kind", ops, [](const Op *op) { return static_cast<int>(op->kind()); });
  append(out, ", ");
  append_column(out, "stage", ops, [](const Op *op) { return op->first.stage; });
  append(out, ", ");
  append_column(out, "microbatch", ops, [](const Op *op) { return op->first.microbatch; });
  append(out, ", ");
  append_column(out, "start", simulation.timing.start, time);
  append(out, ", ");
  append_column(out, "end", simulation.timing.end, time);
  append(out, ", ");
  append_column(out, "waited_for", explanation.waited_for, [](std::int32_t e) { return e; });
  append(out, ", ");
  append_column(out, "critical_path", explanation.path,
                [](const CriticalStep &step) { return step.entry; });
  // Overlapped ops (DualPipe) run two sub-ops; their description names both.
  append(out, ", \"overlapped\": {{");
  bool first = true;
  for (std::size_t e = 0; e < ops.size(); ++e) {
    if (ops[e]->kind() != OpKind::overlapped)
      continue;
    append(out, "{}\"{}\": {}", first ? "" : ",", e, json_string(describe(*ops[e])));
    first = false;
  }
  append(out, "}}, \"memory\": {{\"unit\": \"{}\", \"cap\": {}, \"devices\": [",
         bytes ? "bytes" : "activations", track.cap ? json_number(*track.cap) : "null");
  for (std::size_t g = 0; g < memory.devices.size(); ++g) {
    const std::vector<MemoryPoint> steps = memory_steps(memory.devices[g].timeline);
    append(out, "{}{{", g == 0 ? "" : ", ");
    append_column(out, "time", steps, [&](const MemoryPoint &point) { return time(point.time); });
    append(out, ", ");
    append_column(out, "resident", steps,
                  [](const MemoryPoint &point) { return json_number(point.resident); });
    append(out, ", \"peak\": {}}}", json_number(memory.devices[g].peak));
  }
  append(out, "]}}}}");
  return fmt::to_string(out);
}

} // namespace ppsim
