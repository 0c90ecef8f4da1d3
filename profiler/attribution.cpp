#include "profiler/attribution.h"

#include "base/error.h"

#include <cctype>

#include <algorithm>
#include <charconv>
#include <deque>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

namespace ppsim::profiler {
namespace {

constexpr std::uint64_t kSchema = 1;
constexpr std::string_view kPassCodes[] = {"F", "B", "W", "BW", "R", "RS"};

template <typename Integer> std::optional<Integer> parse_number(std::string_view text) {
  Integer value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

} // namespace

std::string_view pass_code(Pass pass) { return kPassCodes[static_cast<int>(pass) - 1]; }

std::optional<Pass> pass_from_code(std::string_view code) {
  for (int i = 0; i < 6; ++i) {
    if (kPassCodes[i] == code)
      return static_cast<Pass>(i + 1);
  }
  return std::nullopt;
}

std::uint64_t pack_phase_id(PhaseId phase) {
  return kSchema << 56 | std::uint64_t{static_cast<std::uint8_t>(phase.pass)} << 48 |
         std::uint64_t{phase.layer} << 32 | std::uint64_t{phase.microbatch} << 16 |
         phase.repetition;
}

std::optional<PhaseId> unpack_phase_id(std::uint64_t external_id) {
  if (external_id >> 56 != kSchema)
    return std::nullopt;
  const auto pass = static_cast<std::uint8_t>(external_id >> 48 & 0xff);
  if (pass < 1 || pass > 6)
    return std::nullopt;
  return PhaseId{static_cast<Pass>(pass), static_cast<std::uint16_t>(external_id >> 32 & 0xffff),
                 static_cast<std::uint16_t>(external_id >> 16 & 0xffff),
                 static_cast<std::uint16_t>(external_id & 0xffff)};
}

std::string nvtx_range_name(PhaseId phase) {
  return fmt::format("L{:02}.{}.mb{}", phase.layer, pass_code(phase.pass), phase.microbatch);
}

std::optional<PhaseId> parse_range_name(std::string_view name) {
  std::string_view parts[3];
  char separator = name.find('/') != std::string_view::npos ? '/' : '.';
  std::size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const std::size_t end = i < 2 ? name.find(separator, start) : name.size();
    if (end == std::string_view::npos)
      return std::nullopt;
    parts[i] = name.substr(start, end - start);
    start = end + 1;
  }
  if (separator == '.') {
    if (parts[0].size() < 2 || parts[0][0] != 'L' || parts[2].substr(0, 2) != "mb")
      return std::nullopt;
    parts[0].remove_prefix(1);
    parts[2].remove_prefix(2);
  }
  const auto layer = parse_number<std::uint16_t>(parts[0]);
  const auto pass = pass_from_code(parts[1]);
  const auto microbatch = parse_number<std::uint16_t>(parts[2]);
  if (!layer || !pass || !microbatch)
    return std::nullopt;
  return PhaseId{*pass, *layer, *microbatch, 0};
}

std::uint64_t union_length_ns(std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::uint64_t total = 0;
  std::uint64_t covered_until = 0;
  for (const auto &[start, end] : intervals) {
    if (end <= start)
      continue;
    const std::uint64_t from = std::max(start, covered_until);
    if (end > from)
      total += end - from;
    covered_until = std::max(covered_until, end);
  }
  return total;
}

bool is_communication_kernel(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return lower.find("nccl") != std::string::npos;
}

IncrementalAttribution::IncrementalAttribution(std::size_t max_pending)
    : max_pending_(max_pending) {}

void IncrementalAttribution::add(const DecodedActivity &batch) {
  for (const CorrelationLink &link : batch.links) {
    if (link.external_kind != kPpsimExternalKind)
      continue; // another tool's ids
    if (const auto phase = unpack_phase_id(link.external_id))
      phase_of_[link.correlation_id] = *phase;
  }
  // Activity that waited for its link (which CUPTI may deliver in a later buffer).
  std::deque<Waiting> waiting;
  waiting.swap(pending_);
  for (const Waiting &item : waiting)
    place(item);
  for (const MemoryEvent &memory : batch.memory)
    place(memory);
  for (const GpuActivity &gpu : batch.gpu) {
    if (gpu.start_ns == 0 && gpu.end_ns == 0) {
      ++result_.zero_timestamp_activities;
      continue;
    }
    if (gpu.kind == GpuActivityKind::kernel && gpu.name_id < batch.names.size() &&
        is_communication_kernel(batch.names.text(gpu.name_id))) {
      ++result_.communication_kernels;
      result_.communication_busy_ns += gpu.end_ns - gpu.start_ns;
      continue;
    }
    place(gpu);
  }
  while (pending_.size() > max_pending_) { // bounded: the oldest give up waiting
    unattributed(pending_.front());
    pending_.pop_front();
  }
}

void IncrementalAttribution::place(const Waiting &item) {
  const std::uint32_t correlation =
      std::visit([](const auto &event) { return event.correlation_id; }, item);
  const auto found = phase_of_.find(correlation);
  if (found == phase_of_.end()) {
    pending_.push_back(item);
    return;
  }
  Accumulator &phase = by_phase_[found->second];
  phase.metrics.phase = found->second;
  if (const auto *memory = std::get_if<MemoryEvent>(&item)) {
    const auto bytes = static_cast<std::int64_t>(memory->bytes);
    phase.metrics.allocations += memory->allocation ? 1 : 0;
    result_.allocations_in_phases += memory->allocation ? 1 : 0;
    phase.metrics.allocated_bytes += memory->allocation ? bytes : -bytes;
    return;
  }
  const GpuActivity &gpu = std::get<GpuActivity>(item);
  phase.intervals.emplace_back(gpu.start_ns, gpu.end_ns);
  phase.first_start = std::min(phase.first_start, gpu.start_ns);
  phase.last_end = std::max(phase.last_end, gpu.end_ns);
  if (gpu.kind == GpuActivityKind::kernel) {
    ++phase.metrics.n_kernels;
    phase.metrics.kernel_sum_ns += gpu.end_ns - gpu.start_ns;
  } else {
    phase.metrics.copy_bytes += gpu.bytes;
  }
}

void IncrementalAttribution::unattributed(const Waiting &item) {
  if (std::holds_alternative<MemoryEvent>(item)) {
    result_.unattributed_allocations += std::get<MemoryEvent>(item).allocation ? 1 : 0;
    return;
  }
  const GpuActivity &gpu = std::get<GpuActivity>(item);
  ++result_.unattributed_activities;
  unattributed_.emplace_back(gpu.start_ns, gpu.end_ns);
  // Bounded too: past this many intervals their union is folded into the total (overlaps across
  // two folds, rare since activity arrives nearly in time order, are then counted twice).
  constexpr std::size_t kFoldAt = std::size_t{1} << 16;
  if (unattributed_.size() >= kFoldAt) {
    result_.unattributed_busy_ns += union_length_ns(std::move(unattributed_));
    unattributed_.clear();
  }
}

Attribution IncrementalAttribution::finish() {
  for (const Waiting &item : pending_)
    unattributed(item);
  pending_.clear();
  Attribution result = result_;
  for (auto &[id, phase] : by_phase_) {
    if (phase.intervals.empty())
      continue; // allocations only, no GPU work: nothing to time
    phase.metrics.busy_union_ns = union_length_ns(phase.intervals);
    phase.metrics.span_ns = phase.last_end - phase.first_start;
    result.attributed_busy_ns += phase.metrics.busy_union_ns;
    result.phases.push_back(phase.metrics);
  }
  result.unattributed_busy_ns += union_length_ns(unattributed_);
  return result;
}

Attribution attribute(const DecodedActivity &activity) {
  IncrementalAttribution attribution;
  attribution.add(activity);
  return attribution.finish();
}

void number_repetitions(const std::vector<PhaseId *> &in_start_order, const std::string &source) {
  std::map<std::tuple<std::uint16_t, Pass, std::uint16_t>, std::uint32_t> seen;
  for (PhaseId *phase : in_start_order) {
    std::uint32_t &count = seen[{phase->layer, phase->pass, phase->microbatch}];
    if (count > std::numeric_limits<std::uint16_t>::max()) {
      throw Error(source, 0, "",
                  fmt::format("more than 65 536 ranges {}: profile fewer iterations",
                              nvtx_range_name(*phase)));
    }
    phase->repetition = static_cast<std::uint16_t>(count++);
  }
}

} // namespace ppsim::profiler
