#include "sim/io/trace.h"
#include "base/index.h"

#include "base/assert.h"
#include "sim/io/memory_steps.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

namespace ppsim {
namespace {

// Chrome traces count microseconds; scenario times are in the user's unit.
double nanoseconds_per(std::string_view time_unit) {
  if (time_unit == "s")
    return 1e9;
  if (time_unit == "us")
    return 1e3;
  PPSIM_ASSERT(time_unit == "ms"); // the scenario builder accepts only s, ms and us
  return 1e6;
}

constexpr int kComputeTrack = 0;
constexpr int kFirstSendTrack = 1;

class TraceWriter {
public:
  TraceWriter(const Scenario &scenario, const Schedule &schedule, const Simulation &simulation,
              std::string_view time_unit)
      : scenario_(scenario), scale_(scenario.time_scale),
        nanoseconds_per_unit_(nanoseconds_per(time_unit)), schedule_(schedule),
        simulation_(simulation) {
    std::int32_t offset = 0;
    for (const auto &ops : schedule.device_ops) {
      entry_offset_.push_back(offset);
      offset += static_cast<std::int32_t>(ops.size());
    }
  }

  std::string write() {
    append_raw("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"schedule\":");
    append_string(schedule_.name);
    append(",\"makespan_us\":{}", microseconds(nanoseconds(simulation_.metrics.makespan)));
    write_memory_caps();
    append_raw("},\"traceEvents\":[");
    const std::vector<std::size_t> transfers = transfers_by_sender();
    auto next_transfer = transfers.begin();
    for (int g = 0; g < schedule_.device_count(); ++g) {
      metadata(g, "process_name", kComputeTrack, fmt::format("device {}", g));
      metadata(g, "thread_name", kComputeTrack, "compute");
      write_compute(g);
      const auto sent_end = std::find_if(next_transfer, transfers.end(), [&](std::size_t k) {
        return simulation_.timing.transfers[k].from_device != g;
      });
      write_sends(g, next_transfer, sent_end);
      next_transfer = sent_end;
      write_memory_counter(g);
    }
    append_raw("\n]}\n");
    return fmt::to_string(out_);
  }

private:
  template <typename... Args> void append(fmt::format_string<Args...> format, Args &&...args) {
    fmt::format_to(std::back_inserter(out_), format, std::forward<Args>(args)...);
  }

  void append_raw(std::string_view text) { out_.append(text.data(), text.data() + text.size()); }

  // Appends `text` as a JSON string literal (schedule names come from user files).
  void append_string(std::string_view text) {
    out_.push_back('"');
    for (const char c : text) {
      if (c == '"' || c == '\\') {
        out_.push_back('\\');
        out_.push_back(c);
      } else if (static_cast<unsigned char>(c) < 0x20) {
        append("\\u{:04x}", static_cast<unsigned>(c));
      } else {
        out_.push_back(c);
      }
    }
    out_.push_back('"');
  }

  // Times are whole nanoseconds written as microseconds with three decimals: a reader that
  // converts to nanoseconds (Perfetto) gets the integers back, so a slice that ends where the
  // next one starts never overlaps it after conversion.
  [[nodiscard]] std::int64_t nanoseconds(Ticks t) const {
    return static_cast<std::int64_t>(std::llround(scale_.to_units(t) * nanoseconds_per_unit_));
  }
  static std::string microseconds(std::int64_t ns) {
    return ns % 1000 == 0 ? fmt::format("{}", ns / 1000)
                          : fmt::format("{}.{:03}", ns / 1000, ns % 1000);
  }

  void begin_event(char phase, std::string_view name, int device, int track) {
    append("{}\n{{\"ph\":\"{}\",\"name\":", first_event_ ? "" : ",", phase);
    first_event_ = false;
    append_string(name);
    append(",\"pid\":{},\"tid\":{}", device + 1,
           track); // process ids from 1 (0 is special in Perfetto)
  }

  void metadata(int device, std::string_view kind, int track, std::string_view name) {
    begin_event('M', kind, device, track);
    append(",\"args\":{{\"name\":");
    append_string(name);
    append("}}}}");
  }

  void span(std::string_view name, int device, int track, Ticks start, Ticks end) {
    begin_event('X', name, device, track);
    const std::int64_t from = nanoseconds(start);
    append(",\"ts\":{},\"dur\":{}", microseconds(from), microseconds(nanoseconds(end) - from));
  }

  [[nodiscard]] const Op &op_of(std::int32_t entry, int device) const {
    return schedule_.device_ops[at(device)][at(entry - entry_offset_[at(device)])];
  }

  void write_compute(int g) {
    const auto &ops = schedule_.device_ops[at(g)];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto entry = at(entry_offset_[at(g)]) + i;
      const Op &op = ops[i];
      span(describe(op), g, kComputeTrack, simulation_.timing.start[entry],
           simulation_.timing.end[entry]);
      append(",\"cat\":\"{}\",\"args\":{{\"kind\":\"{}\",\"stage\":{},\"microbatch\":{}",
             op_kind_token(op.kind()), op_kind_token(op.kind()), op.first.stage,
             op.first.microbatch);
      if (op.kind() == OpKind::overlapped)
        append(",\"backward\":\"{}\"", describe(op.second));
      append("}}}}");
    }
  }

  // Indices of the transfers that take time, grouped by sending device, each group in order of
  // start time. Instant transfers (no latency) would only double the trace with empty slices.
  [[nodiscard]] std::vector<std::size_t> transfers_by_sender() const {
    const auto &transfers = simulation_.timing.transfers;
    std::vector<std::size_t> order;
    for (std::size_t k = 0; k < transfers.size(); ++k) {
      if (transfers[k].end > transfers[k].start)
        order.push_back(k);
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const Transfer &x = transfers[a];
      const Transfer &y = transfers[b];
      return std::tie(x.from_device, x.start) < std::tie(y.from_device, y.start);
    });
    return order;
  }

  // Trace viewers need the slices of one track to nest, so a transfer that starts before the
  // previous one on a lane has arrived goes to the first free lane (interval partitioning).
  void write_sends(int g, std::vector<std::size_t>::const_iterator begin,
                   std::vector<std::size_t>::const_iterator end) {
    std::vector<Ticks> lane_free;
    for (auto it = begin; it != end; ++it) {
      const Transfer &transfer = simulation_.timing.transfers[*it];
      auto lane = std::find_if(lane_free.begin(), lane_free.end(),
                               [&](Ticks free) { return free <= transfer.start; });
      if (lane == lane_free.end())
        lane = lane_free.insert(lane_free.end(), Ticks{});
      *lane = transfer.end;
      const int track = kFirstSendTrack + static_cast<int>(lane - lane_free.begin());
      const std::string sent = describe(op_of(transfer.producer, g));
      span(fmt::format("{} -> device {}", sent, transfer.to_device), g, track, transfer.start,
           transfer.end);
      append(",\"cat\":\"transfer\",\"args\":{{\"op\":\"{}\",\"to\":{},\"consumer\":\"{}\"}}}}",
             sent, transfer.to_device, describe(op_of(transfer.consumer, transfer.to_device)));
    }
    for (std::size_t lane = 0; lane < lane_free.size(); ++lane) {
      metadata(g, "thread_name", kFirstSendTrack + static_cast<int>(lane),
               lane == 0 ? std::string("send") : fmt::format("send {}", lane + 1));
    }
  }

  // The cap of each counter series that has one (K in count units, the budget in bytes), so a
  // figure of the counters can draw it; none when the run is uncapped.
  void write_memory_caps() {
    const std::pair<std::string_view, const std::optional<double> *> caps[] = {
        {"activations", &scenario_.activations.cap},
        {"bytes", scenario_.bytes && simulation_.bytes ? &scenario_.bytes->cap : nullptr}};
    bool first = true;
    for (const auto &[series, cap] : caps) {
      if (cap == nullptr || !cap->has_value())
        continue;
      append("{}\"{}\":{}", first ? ",\"memory_caps\":{" : ",", series, **cap);
      first = false;
    }
    if (!first)
      append_raw("}");
  }

  // One counter track per device, `memory`, with a series per tracked quantity (`activations`,
  // and `bytes` in the byte model), each point carrying every series' value from then on.
  void write_memory_counter(int g) {
    std::vector<std::pair<std::string_view, std::vector<MemoryPoint>>> series{
        {"activations", memory_steps(simulation_.activations.devices[at(g)].timeline)}};
    if (simulation_.bytes)
      series.emplace_back("bytes", memory_steps(simulation_.bytes->devices[at(g)].timeline));
    std::vector<std::size_t> next(series.size(), 0);
    std::vector<double> value(series.size(), 0.0);
    for (;;) {
      std::optional<Ticks> time;
      for (std::size_t k = 0; k < series.size(); ++k) {
        if (next[k] < series[k].second.size() && (!time || series[k].second[next[k]].time < *time))
          time = series[k].second[next[k]].time;
      }
      if (!time)
        break;
      for (std::size_t k = 0; k < series.size(); ++k) {
        if (next[k] < series[k].second.size() && series[k].second[next[k]].time == *time)
          value[k] = series[k].second[next[k]++].resident;
      }
      begin_event('C', "memory", g, kComputeTrack);
      append(",\"ts\":{},\"args\":{{", microseconds(nanoseconds(*time)));
      for (std::size_t k = 0; k < series.size(); ++k)
        append("{}\"{}\":{}", k == 0 ? "" : ",", series[k].first, value[k]);
      append("}}}}");
    }
  }

  const Scenario &scenario_;
  const TimeScale &scale_;
  double nanoseconds_per_unit_;
  const Schedule &schedule_;
  const Simulation &simulation_;
  std::vector<std::int32_t> entry_offset_;
  fmt::memory_buffer out_;
  bool first_event_ = true;
};

} // namespace

std::string chrome_trace_json(const Scenario &scenario, const Schedule &schedule,
                              const Simulation &simulation, std::string_view time_unit) {
  return TraceWriter(scenario, schedule, simulation, time_unit).write();
}

} // namespace ppsim
