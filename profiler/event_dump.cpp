#include "profiler/event_dump.h"

#include "base/error.h"

#include <fmt/format.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

namespace ppsim::profiler {
namespace {

constexpr const char *kKindNames[] = {"kernel", "memcpy", "memset"};

template <typename T>
T field(const nlohmann::json &line, const char *key, const std::string &source, int number) {
  const auto found = line.find(key);
  if (found == line.end())
    throw Error(source, number, key, "missing");
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // A float (1.8e23) converted to an integer type is undefined behaviour: integers only, in
    // range.
    const bool fits =
        std::is_unsigned_v<T>
            ? found->is_number_unsigned() &&
                  found->template get<std::uint64_t>() <= std::numeric_limits<T>::max()
            : found->is_number_integer() &&
                  found->template get<std::int64_t>() >= std::numeric_limits<T>::min() &&
                  found->template get<std::int64_t>() <= std::numeric_limits<T>::max();
    if (!fits)
      throw Error(source, number, key,
                  fmt::format("expected an integer in range, got {}", found->dump()));
  }
  try {
    return found->get<T>();
  } catch (const nlohmann::json::exception &) {
    throw Error(source, number, key, fmt::format("unexpected value {}", found->dump()));
  }
}

} // namespace

std::string write_events_ndjson(const DecodedActivity &activity) {
  std::string text;
  for (const GpuActivity &gpu : activity.gpu) {
    nlohmann::ordered_json line{{"type", "gpu"},
                                {"kind", kKindNames[static_cast<int>(gpu.kind)]},
                                {"start", gpu.start_ns},
                                {"end", gpu.end_ns},
                                {"device", gpu.device_id},
                                {"stream", gpu.stream_id},
                                {"correlation", gpu.correlation_id},
                                {"graph", gpu.graph_id},
                                {"bytes", gpu.bytes}};
    if (gpu.kind == GpuActivityKind::kernel)
      line["name"] = activity.names.text(gpu.name_id);
    text += line.dump() + "\n";
  }
  for (const CorrelationLink &link : activity.links) {
    text += nlohmann::ordered_json{{"type", "link"},
                                   {"correlation", link.correlation_id},
                                   {"external_id", link.external_id},
                                   {"external_kind", link.external_kind}}
                .dump() +
            "\n";
  }
  for (const ApiCall &call : activity.api_calls) {
    text += nlohmann::ordered_json{{"type", "api"},
                                   {"driver", call.driver},
                                   {"cbid", call.callback_id},
                                   {"start", call.start_ns},
                                   {"end", call.end_ns},
                                   {"thread", call.thread_id},
                                   {"correlation", call.correlation_id}}
                .dump() +
            "\n";
  }
  text += nlohmann::ordered_json{{"type", "counts"},
                                 {"records", activity.records},
                                 {"zero_timestamp_kernels", activity.zero_timestamp_kernels},
                                 {"skipped_records", activity.skipped_records},
                                 {"dropped_records", activity.dropped_records},
                                 {"truncated_buffers", activity.truncated_buffers}}
              .dump() +
          "\n";
  return text;
}

DecodedActivity read_events_ndjson(std::string_view text, const std::string &source) {
  DecodedActivity activity;
  int number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (raw.find_first_not_of(" \r\t") == std::string_view::npos)
      continue;
    nlohmann::json line;
    try {
      line = nlohmann::json::parse(raw);
    } catch (const nlohmann::json::out_of_range &) {
      throw Error(source, number, "", "a number is out of range (it must fit a double)");
    } catch (const nlohmann::json::parse_error &) {
      throw Error(source, number, "", "expected one JSON object per line");
    }
    const std::string type = field<std::string>(line, "type", source, number);
    if (type == "gpu") {
      GpuActivity gpu;
      const std::string kind = field<std::string>(line, "kind", source, number);
      if (kind == "kernel") {
        gpu.kind = GpuActivityKind::kernel;
        gpu.name_id = activity.names.intern(field<std::string>(line, "name", source, number));
      } else if (kind == "memcpy") {
        gpu.kind = GpuActivityKind::memcpy;
      } else if (kind == "memset") {
        gpu.kind = GpuActivityKind::memset;
      } else {
        throw Error(source, number, "kind", fmt::format("unknown activity kind '{}'", kind));
      }
      gpu.start_ns = field<std::uint64_t>(line, "start", source, number);
      gpu.end_ns = field<std::uint64_t>(line, "end", source, number);
      gpu.device_id = field<std::uint32_t>(line, "device", source, number);
      gpu.stream_id = field<std::uint32_t>(line, "stream", source, number);
      gpu.correlation_id = field<std::uint32_t>(line, "correlation", source, number);
      gpu.graph_id = field<std::uint32_t>(line, "graph", source, number);
      gpu.bytes = field<std::uint64_t>(line, "bytes", source, number);
      activity.gpu.push_back(gpu);
    } else if (type == "link") {
      activity.links.push_back({field<std::uint32_t>(line, "correlation", source, number),
                                field<std::uint64_t>(line, "external_id", source, number),
                                field<std::uint32_t>(line, "external_kind", source, number)});
    } else if (type == "api") {
      activity.api_calls.push_back({field<bool>(line, "driver", source, number),
                                    field<std::uint32_t>(line, "cbid", source, number),
                                    field<std::uint64_t>(line, "start", source, number),
                                    field<std::uint64_t>(line, "end", source, number),
                                    field<std::uint32_t>(line, "thread", source, number),
                                    field<std::uint32_t>(line, "correlation", source, number)});
    } else if (type == "counts") {
      activity.records = field<std::uint64_t>(line, "records", source, number);
      activity.zero_timestamp_kernels =
          field<std::uint64_t>(line, "zero_timestamp_kernels", source, number);
      activity.skipped_records = field<std::uint64_t>(line, "skipped_records", source, number);
      activity.dropped_records = field<std::uint64_t>(line, "dropped_records", source, number);
      activity.truncated_buffers = field<std::uint64_t>(line, "truncated_buffers", source, number);
    } else {
      throw Error(source, number, "type", fmt::format("unknown event type '{}'", type));
    }
  }
  return activity;
}

} // namespace ppsim::profiler
