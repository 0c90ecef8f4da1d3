#pragma once
// Decoded events as NDJSON (docs/profiler.md, "Modules" and "Event dumps"): GPU runs can dump what
// CUPTI delivered, strings copied, so small traces are committed and replayed on CI through
// attribution and statistics. One JSON object per line, "type" first: "gpu", "link", "api",
// "counts".
#include "profiler/activity.h"

#include <string>
#include <string_view>

namespace ppsim::profiler {

/// Every GPU activity, correlation link and API call, then the counters.
std::string write_events_ndjson(const DecodedActivity &activity);

/// The inverse; throws Error naming `source`, line and field on malformed lines.
DecodedActivity read_events_ndjson(std::string_view text, const std::string &source);

} // namespace ppsim::profiler
