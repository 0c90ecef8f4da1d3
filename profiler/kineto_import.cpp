#include "profiler/kineto_import.h"
#include "base/index.h"

#include "profiler/nested_spans.h"
#include "profiler/stats.h"

#include "base/error.h"
#include "costs/json_shown.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace ppsim::profiler {
namespace {

using Json = nlohmann::json;

// The largest tensor dimension and allocator block read from a trace (docs/reliability.md,
// "Limits"): far above any GPU's, low enough that the products and sums the import forms
// cannot pass 2^63 unnoticed.
constexpr std::int64_t kMaxTensorSize = std::int64_t{1} << 40;
constexpr std::int64_t kMaxAllocationBytes = std::int64_t{1} << 50;

struct Operator {
  std::string name;
  std::vector<std::vector<std::int64_t>> input_dims;
  std::vector<std::vector<std::int64_t>>
      input_strides;       ///< "Input Strides", when recorded (recent PyTorch)
  std::string collective;  ///< record_param_comms: "Collective name"
  std::uint64_t bytes = 0; ///< record_param_comms: "In msg nelems" x the dtype's size
  int peer = -1;           ///< record_param_comms of a send or recv: the peer's global rank
};

// The global rank of group rank `rank`: "Process Group Ranks" lists the group's global ranks,
// as a JSON list or as its text ("[0, 2, 4]"); without it group ranks are global.
int global_rank(int rank, const Json &args) {
  if (!args.contains("Process Group Ranks"))
    return rank;
  const Json &listed = args["Process Group Ranks"];
  std::vector<int> ranks;
  if (listed.is_array()) {
    for (const Json &r : listed)
      if (r.is_number_integer())
        ranks.push_back(r.get<int>());
  } else if (listed.is_string()) {
    const std::string text = listed.get<std::string>();
    for (std::size_t i = 0; i < text.size();) {
      int value = 0;
      const auto [end, error] = std::from_chars(text.data() + i, text.data() + text.size(), value);
      if (error == std::errc()) {
        ranks.push_back(value);
        i = ppsim::at(end - text.data());
      } else {
        ++i;
      }
    }
  }
  return rank >= 0 && rank < static_cast<int>(ranks.size()) ? ranks[ppsim::at(rank)] : rank;
}

// Element sizes of the dtype names PyTorch writes in record_param_comms ("BFloat16", "Float").
std::uint64_t dtype_bytes(const std::string &dtype) {
  static const std::map<std::string, std::uint64_t, std::less<>> sizes{
      {"BFloat16", 2}, {"Half", 2}, {"Float", 4},         {"Double", 8},
      {"Byte", 1},     {"Char", 1}, {"Bool", 1},          {"Short", 2},
      {"Int", 4},      {"Long", 8}, {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}};
  const auto found = sizes.find(dtype);
  return found == sizes.end() ? 0 : found->second;
}

struct GpuActivity {
  std::uint64_t start = 0, end = 0;
  bool kernel = false;
  std::string name;
  std::int64_t correlation = -1;
  std::size_t event = 0; // in "traceEvents", for messages
};

// What the import times for a phase: a GPU kernel, copy or set, or (a trace without GPU work) a
// CPU operator; `kernel` counts it among the phase's kernels.
struct TimedInterval {
  std::uint64_t start = 0, end = 0;
  bool kernel = false;
  friend auto operator<=>(const TimedInterval &, const TimedInterval &) = default;
};

// A CUDA runtime or driver call that launched GPU work: where and when it ran.
struct Launch {
  std::string thread;
  std::uint64_t time = 0;
  std::size_t event = 0; // in "traceEvents", for messages
};

// How far two times of a trace may disagree and still be read as one: older traces write "ts" and
// "dur" in whole microseconds, each rounded, so an end computed from them may be off by up to 2 us.
constexpr std::uint64_t kTraceResolutionNs = 2000;

// PyTorch pipelining's own ranges (torch.distributed.pipelining): the multi-stage runtime's
// "PP:<stage><F|I|B|W><microbatch>" ("PP:2I5": I is the input gradient, B the full backward) and
// ScheduleGPipe's "Forward <mb>" and "Backward <mb>" (Schedule1F1B records none), whose stage
// is the trace's rank. A stage stands where a layer would: one row per stage.
std::optional<PhaseId> pipelining_range(std::string_view name, std::optional<int> rank) {
  const auto number = [](std::string_view digits) -> std::optional<std::uint16_t> {
    std::uint16_t value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size())
      return std::nullopt;
    return value;
  };
  for (const auto &[label, pass] : {std::pair{std::string_view("Forward "), Pass::forward},
                                    std::pair{std::string_view("Backward "), Pass::backward_total}})
    if (name.substr(0, label.size()) == label) {
      const std::optional<std::uint16_t> microbatch = number(name.substr(label.size()));
      const int stage = rank.value_or(0);
      if (!microbatch || stage < 0 || stage > UINT16_MAX)
        return std::nullopt;
      return PhaseId{pass, static_cast<std::uint16_t>(stage), *microbatch, 0};
    }
  if (name.substr(0, 3) != "PP:")
    return std::nullopt;
  name.remove_prefix(3);
  const std::size_t letter = name.find_first_not_of("0123456789");
  if (letter == std::string_view::npos || letter + 1 >= name.size())
    return std::nullopt;
  static constexpr std::pair<char, Pass> kActions[] = {{'F', Pass::forward},
                                                      {'I', Pass::backward_input},
                                                      {'W', Pass::backward_weight},
                                                      {'B', Pass::backward_total}};
  const auto action = std::find_if(std::begin(kActions), std::end(kActions),
                                   [&](const auto &a) { return a.first == name[letter]; });
  const std::optional<std::uint16_t> stage = number(name.substr(0, letter));
  const std::optional<std::uint16_t> microbatch = number(name.substr(letter + 1));
  if (action == std::end(kActions) || !stage || !microbatch)
    return std::nullopt; // SEND_F, RECV_B, OVERLAP_F_B, ...: not a compute pass
  return PhaseId{action->second, *stage, *microbatch, 0};
}

// Operators that move data between ranks or wait for it (c10d's collectives and point-to-point,
// gloo, NCCL): never layer time when the CPU operators are what the import times.
bool is_communication_operator(std::string_view name) {
  return name == "record_param_comms" || name.substr(0, 6) == "c10d::" ||
         name.find("gloo") != std::string_view::npos || is_communication_kernel(name);
}

// A name or thread of the trace as a message shows it: quoted, cut at 80 characters.
std::string shown_text(const std::string &text) { return shown_json(Json(text)); }

// Nanoseconds as microseconds, the trace's unit.
std::string microseconds(std::uint64_t nanoseconds) {
  return fmt::format("{:.3f}", static_cast<double>(nanoseconds) / 1000.0);
}

// One weight a layer's forward multiplied by: its shape and the tokens it was applied to.
struct Weight {
  std::int64_t rows = 0, columns = 0, tokens = 0;
  friend auto operator<=>(const Weight &, const Weight &) = default;
};

class TraceReader {
public:
  TraceReader(std::string_view text, const std::string &source) : source_(source) {
    Json document;
    try {
      document = Json::parse(text);
    } catch (const Json::out_of_range &) {
      fail("a number is out of range (it must fit a double; docs/reliability.md)");
    } catch (const Json::exception &error) {
      fail(fmt::format("not valid JSON ({})", error.what()));
    }
    const Json *events = &document;
    if (document.is_object()) {
      if (!document.contains("traceEvents"))
        fail("not a PyTorch profiler trace: no \"traceEvents\"");
      events = &document["traceEvents"];
      const Json &info =
          document.contains("distributedInfo") ? document["distributedInfo"] : empty_;
      if (info.is_object() && info.contains("rank") && info["rank"].is_number_integer())
        rank_ = info["rank"].get<int>();
    }
    if (!events->is_array())
      fail("not a PyTorch profiler trace: \"traceEvents\" is not a list");
    // Older traces count microseconds from the epoch: times are taken from the earliest event
    // the import reads (metadata and other events may carry a "ts" of 0).
    bool any = false;
    std::vector<EventKind> kinds(events->size());
    for (std::size_t i = 0; i < events->size(); ++i) {
      const Json &event = (*events)[i];
      kinds[i] = kind_of(event);
      if (kinds[i] == EventKind::unused || !member(event, "ts").is_number())
        continue;
      const double ts = event["ts"].get<double>();
      if (std::isfinite(ts) && (!any || ts < base_us_)) {
        base_us_ = ts;
        base_event_ = i;
      }
      any = true;
    }
    for (std::size_t i = 0; i < events->size(); ++i) {
      try {
        read_event((*events)[i], i, kinds[i]);
      } catch (const Json::exception &error) {
        fail(fmt::format("event {}: {}", i, error.what()));
      }
    }
    // A stage and a layer would share ids: where ppsim's layer ranges exist, PyTorch
    // pipelining's own ranges are left out.
    const auto pipelining_count = std::count(from_pipelining_.begin(), from_pipelining_.end(), true);
    if (pipelining_count > 0 && pipelining_count < std::ssize(from_pipelining_)) {
      for (auto &[thread, spans] : phase_spans_)
        std::erase_if(spans, [this](const CpuSpan &span) { return from_pipelining_[span.index]; });
      warnings_.push_back(fmt::format(
          "{} ranges of PyTorch pipelining (PP:...) left out: the trace has ppsim's layer ranges, "
          "whose ids they would share",
          pipelining_count));
    }
    if (overlapped_ranges_ > 0)
      warnings_.push_back(fmt::format(
          "{} overlapped forward-backward pairs (PP:(...)OVERLAP_F_B, DualPipeV) not timed: their "
          "forward and backward run as one range",
          overlapped_ranges_));
    phase_span_of_.resize(phases_.size());
    for (auto &[thread, spans] : phase_spans_) {
      nest_or_fail(spans, thread, [this](std::size_t i) { return nvtx_range_name(phases_[i]); });
      for (const CpuSpan &span : spans)
        phase_span_of_[span.index] = span;
    }
    for (auto *operators : {&operator_spans_, &communication_spans_})
      for (auto &[thread, spans] : *operators)
        nest_or_fail(spans, thread, [this](std::size_t i) { return operators_[i].name; });
    for (auto &device : memory_)
      for (auto &[thread, events] : device)
        std::sort(events.begin(), events.end());
  }

  KinetoImport attribute() {
    if (phases_.empty()) {
      fail("no record_function range named like L03.F.mb0 or 3/F/0 (layer/pass/microbatch), nor "
           "PyTorch pipelining's PP:2F0 or Forward 0: nothing to measure (docs/profiler.md, "
           "\"Import a PyTorch trace\")");
    }
    number_repetitions();
    const std::map<std::uint16_t, std::set<Weight>> weights = forward_weights();
    KinetoImport result;
    result.warnings = warnings_;
    result.cpu_timed = gpu_.empty();
    if (result.cpu_timed)
      time_operators(weights, result);
    else
      time_gpu_work(weights, result);
    // PyTorch's runtime opens a range for every action it runs: one with no work ran in no time
    // (the first stage's I, whose input needs no gradient), not unmeasured.
    for (const auto &[thread, spans] : phase_spans_)
      for (const CpuSpan &span : spans)
        if (from_pipelining_[span.index])
          members_[{phases_[span.index], 0}];
    if (result.cross_thread > 0)
      result.warnings.push_back(fmt::format(
          "{} {} ran on threads without a phase range (autograd's) and were attributed to the "
          "range open on another thread of the process",
          result.cross_thread, result.cpu_timed ? "CPU operators" : "GPU kernels and copies"));
    std::set<PhaseId> split;
    for (const auto &[key, list] : members_)
      if (key.second == 2 && !ambiguous_.count(key.first))
        split.insert(key.first);
    result.split_ranges = split.size();
    result.ambiguous_ranges = ambiguous_.size();
    // One warning per layer (every repetition of a layer runs the same shapes).
    std::set<std::uint16_t> warned;
    for (const auto &[id, gemm] : ambiguous_) {
      if (!warned.insert(id.layer).second)
        continue;
      result.warnings.push_back(fmt::format(
          "layer {}: a backward aten::mm {} fits both an input gradient and a weight gradient of "
          "the same "
          "shapes (tokens equal a weight dimension) and its \"Input Strides\" do not tell them "
          "apart; its BW "
          "ranges are not split into B and W (docs/profiler.md, \"B and W from a whole backward\")",
          id.layer, gemm));
    }
    for (const auto &[key, list] : members_) {
      const auto &[id, part] = key;
      if (part != 0 && !split.count(id))
        continue;
      PhaseId phase = id;
      if (part == 1)
        phase.pass = Pass::backward_input;
      if (part == 2)
        phase.pass = Pass::backward_weight;
      result.phases.push_back(metrics_of(phase, list));
    }
    std::sort(result.phases.begin(), result.phases.end(),
              [](const PhaseMetrics &a, const PhaseMetrics &b) { return a.phase < b.phase; });
    // The bytes a forward keeps: its thread's allocator events inside it, summed from prefix sums
    // of the events in time order (exact in 128 bits; each block is at most 2^50).
    __extension__ using Int128 = __int128;
    for (const auto &thread_spans : phase_spans_) {
      const std::string &thread = thread_spans.first;
      const std::vector<CpuSpan> &spans = thread_spans.second; // a lambda captures it
      // The device whose memory holds the activations: the GPU's, or in a CPU run the host's.
      const auto &allocations = memory_[result.cpu_timed ? 0 : 1];
      const auto events = allocations.find(thread);
      if (events == allocations.end())
        continue;
      const std::vector<std::pair<std::uint64_t, std::int64_t>> &list = events->second;
      std::vector<Int128> prefix(list.size() + 1, 0);
      for (std::size_t i = 0; i < list.size(); ++i)
        prefix[i + 1] = prefix[i] + list[i].second;
      const auto first_at = [&list](std::uint64_t time) {
        return static_cast<std::size_t>(
            std::lower_bound(list.begin(), list.end(), std::pair<std::uint64_t, std::int64_t>{
                                                           time, INT64_MIN}) -
            list.begin());
      };
      // A backward's transient is measured where its allocations are: on its range's thread, and
      // with no recomputation inside (a checkpoint's R range), whose rebuilt activations are the
      // level's, not the backward's. Elsewhere it is left unmeasured (its column absent). The
      // spans are nested and in start order (nest_or_fail): those inside one follow it.
      const auto recomputes_inside = [this, &spans](std::size_t k) {
        for (std::size_t inner = k + 1; inner < spans.size() && spans[inner].start < spans[k].end;
             ++inner) {
          const Pass pass = phases_[spans[inner].index].pass;
          if (pass == Pass::recompute_full || pass == Pass::recompute_selective)
            return true;
        }
        return false;
      };
      for (std::size_t k = 0; k < spans.size(); ++k) {
        const CpuSpan &span = spans[k];
        const PhaseId &phase = phases_[span.index];
        if (phase.pass != Pass::forward && phase.pass != Pass::backward_total)
          continue;
        const std::size_t first = first_at(span.start), last = first_at(span.end);
        const bool backward = phase.pass == Pass::backward_total;
        if (backward && (first == last || recomputes_inside(k)))
          continue;
        Int128 highest = 0;
        for (std::size_t i = first; i < last; ++i)
          highest = std::max(highest, prefix[i + 1] - prefix[first]);
        const Int128 kept = prefix[last] - prefix[first];
        if (kept > INT64_MAX || kept < INT64_MIN || highest > INT64_MAX)
          fail(fmt::format("the allocator events of range {} add up past 2^63 bytes",
                           nvtx_range_name(phase)));
        if (!backward) {
          result.forward_kept_bytes[phase] = static_cast<std::int64_t>(kept);
          result.transient_bytes[phase] =
              static_cast<std::int64_t>(highest - std::max<Int128>(kept, 0));
        } else {
          result.transient_bytes[phase] = static_cast<std::int64_t>(highest);
        }
      }
    }
    return result;
  }


  // GPU work: each kernel, copy or set belongs to the innermost phase range around the CPU call
  // that launched it; a BW range's weight-gradient multiplies are also its W, the rest its B.
  void time_gpu_work(const std::map<std::uint16_t, std::set<Weight>> &weights,
                     KinetoImport &result) {
    const std::set<Weight> no_weights;
    for (const GpuActivity &activity : gpu_) {
      ++result.kernels;
      const auto launch = launches_.find(activity.correlation);
      if (launch != launches_.end() && activity.start + kTraceResolutionNs < launch->second.time)
        fail(fmt::format("event {} ({} {}) starts {} us before its launch, event {} "
                         "(correlation {}): the correlation ids do not pair kernels with launches",
                         activity.event, activity.kernel ? "kernel" : "GPU copy",
                         shown_text(activity.name),
                         microseconds(launch->second.time - activity.start),
                         launch->second.event, activity.correlation));
      if (activity.kernel && is_communication_kernel(activity.name)) {
        ++result.communication;
        result.communication_ns += activity.end - activity.start;
        CommunicationKernel kernel{activity.name, 0, activity.end - activity.start, ""};
        if (launch != launches_.end()) {
          if (const std::optional<std::size_t> op =
                  innermost(communication_spans_, launch->second)) {
            const Operator &comms = operators_[*op];
            kernel.collective = comms.collective.empty() ? activity.name : comms.collective;
            kernel.bytes = comms.bytes;
            if (comms.peer >= 0) {
              const std::string self = rank_ ? std::to_string(*rank_) : "?";
              const std::string peer = std::to_string(comms.peer);
              kernel.link = comms.collective == "send" ? self + "->" + peer : peer + "->" + self;
            }
          }
        }
        result.communication_kernels.push_back(std::move(kernel));
        continue;
      }
      const std::optional<PhaseAt> phase =
          launch == launches_.end() ? std::nullopt
                                    : phase_at(launch->second.thread, launch->second.time);
      if (!phase) {
        ++result.unattributed;
        continue;
      }
      result.cross_thread += phase->other_thread ? 1 : 0;
      const PhaseId id = phases_[phase->index];
      const TimedInterval interval{activity.start, activity.end, activity.kernel};
      members_[{id, 0}].push_back(interval);
      if (id.pass != Pass::backward_total)
        continue;
      const auto found = weights.find(id.layer);
      const std::optional<std::size_t> op = innermost(operator_spans_, launch->second);
      const Role role = op ? gemm_role(operators_[*op], found == weights.end() ? no_weights
                                                                                : found->second)
                           : Role::input_gradient;
      if (role == Role::ambiguous) {
        ambiguous_.emplace(id, ambiguous_gemm_);
        continue;
      }
      members_[{id, role == Role::weight_gradient ? 2 : 1}].push_back(interval);
    }
  }

  // A trace without GPU work (a CPU run): the CPU operators are the timed events. Each outermost
  // operator inside a phase range (its parent, if any, started before the range) counts for the
  // innermost range around its start, cut to the range; communication operators count apart.
  // In a BW range the weight-gradient `aten::mm` calls (at any depth) are its W, the rest its B.
  void time_operators(const std::map<std::uint16_t, std::set<Weight>> &weights,
                      KinetoImport &result) {
    const std::set<Weight> no_weights;
    std::map<PhaseId, std::vector<TimedInterval>> weight_gradients;
    // Per phase range, the ranges directly inside it: their time is theirs (as a kernel belongs
    // to the innermost range only).
    std::vector<std::vector<TimedInterval>> nested(phases_.size());
    for (const auto &[thread, spans] : phase_spans_)
      for (const CpuSpan &span : spans)
        if (span.parent >= 0)
          nested[spans[at(span.parent)].index].push_back({span.start, span.end, true});
    for (const auto &[thread, spans] : operator_spans_) {
      for (const CpuSpan &span : spans) {
        const Operator &op = operators_[span.index];
        const std::optional<PhaseAt> phase = phase_at(thread, span.start);
        const CpuSpan *range = phase ? &phase_span_of_[phase->index] : nullptr;
        const bool outermost =
            span.parent < 0 || (range && spans[at(span.parent)].start < range->start);
        if (outermost && is_communication_operator(op.name)) {
          ++result.communication;
          result.communication_ns += span.end - span.start;
          continue;
        }
        if (!range) {
          result.unattributed += outermost ? 1 : 0;
          continue;
        }
        const TimedInterval interval{std::max(span.start, range->start),
                                     std::min(span.end, range->end), true};
        const PhaseId id = phases_[phase->index];
        if (outermost) {
          ++result.kernels;
          result.cross_thread += phase->other_thread ? 1 : 0;
          std::vector<TimedInterval> &counted = members_[{id, 0}];
          for (const TimedInterval &part : subtract({interval}, nested[phase->index]))
            counted.push_back(part);
        }
        if (id.pass != Pass::backward_total || op.name != "aten::mm")
          continue;
        const auto found = weights.find(id.layer);
        const Role role =
            gemm_role(op, found == weights.end() ? no_weights : found->second);
        if (role == Role::ambiguous)
          ambiguous_.emplace(id, ambiguous_gemm_);
        else if (role == Role::weight_gradient)
          weight_gradients[id].push_back(interval);
      }
    }
    // W is the range's counted time inside its weight-gradient multiplies, B the rest.
    for (auto &[id, list] : weight_gradients) {
      const auto counted = members_.find({id, 0});
      if (ambiguous_.count(id) || counted == members_.end())
        continue;
      std::sort(list.begin(), list.end());
      std::sort(counted->second.begin(), counted->second.end());
      std::vector<TimedInterval> weight = intersect(counted->second, list);
      members_[{id, 1}] = subtract(counted->second, weight);
      members_[{id, 2}] = std::move(weight);
    }
  }

  // The parts of `intervals` inside `windows` (both sorted; the windows disjoint).
  static std::vector<TimedInterval> intersect(const std::vector<TimedInterval> &intervals,
                                              const std::vector<TimedInterval> &windows) {
    std::vector<TimedInterval> inside;
    for (const TimedInterval &interval : intervals)
      for (const TimedInterval &window : windows) {
        const std::uint64_t from = std::max(interval.start, window.start);
        const std::uint64_t to = std::min(interval.end, window.end);
        if (from < to)
          inside.push_back({from, to, true});
      }
    std::sort(inside.begin(), inside.end());
    return inside;
  }

private:
  [[noreturn]] void fail(const std::string &sentence) const {
    throw Error(source_, 0, "", sentence);
  }

  // A time ("ts", from the earliest event) or a duration ("dur") in microseconds, as nanoseconds.
  std::uint64_t nanoseconds(const Json &value, std::size_t event, const char *field) const {
    if (!value.is_number())
      fail(fmt::format("event {}: \"{}\" is not a number", event, field));
    const double microseconds =
        value.get<double>() - (std::string_view(field) == "ts" ? base_us_ : 0.0);
    if (std::string_view(field) == "ts" && std::isfinite(microseconds) && microseconds > 1e12)
      fail(fmt::format("event {}: \"ts\" is out of range ({}: more than 10^12 us after the "
                       "earliest event, {})",
                       event, shown_json(value), base_event_));
    if (!std::isfinite(microseconds) || microseconds < 0 || microseconds > 1e12)
      fail(fmt::format("event {}: \"{}\" is out of range ({})", event, field, shown_json(value)));
    return static_cast<std::uint64_t>(std::llround(microseconds * 1000));
  }

  // The member `name` of `object`, or null when absent; a reference, since copying a value nested
  // deep would recurse as deep.
  const Json &member(const Json &object, const char *name) const {
    const auto found = object.find(name);
    return found == object.end() ? null_ : *found;
  }

  // A string member, or "" when absent or of another type.
  std::string text_member(const Json &object, const char *name) const {
    const Json &value = member(object, name);
    return value.is_string() ? value.get<std::string>() : "";
  }

  // The "correlation" id of a launch or of GPU work, when it has one: a non-negative integer
  // (-1 marks GPU work without one; an id past 2^63 once wrapped to it and paired with them).
  std::optional<std::int64_t> correlation_of(const Json &args, std::size_t index) const {
    const Json &value = member(args, "correlation");
    if (!value.is_number_integer())
      return std::nullopt;
    if (value.is_number_unsigned() ? value.get<std::uint64_t>() > INT64_MAX
                                   : value.get<std::int64_t>() < 0)
      fail(fmt::format("event {}: \"correlation\" is out of range ({}; a non-negative 64-bit id)",
                       index, shown_json(value)));
    return value.get<std::int64_t>();
  }

  // The thread an event ran on, "pid/tid"; each a number or a name (absent: null).
  std::string thread_of(const Json &event, std::size_t index) {
    std::string key;
    for (const char *field : {"pid", "tid"}) {
      const Json &value = member(event, field);
      if (!value.is_primitive())
        fail(fmt::format("event {}: \"{}\" is {}, expected a number or a name", index, field,
                         shown_json(value)));
      key += (key.empty() ? "" : "/") + value.dump();
    }
    process_of_.try_emplace(key, member(event, "pid").dump());
    return key;
  }

  enum class EventKind { unused, memory, complete };

  // Whether the import reads an event: an allocator event, or a complete event ("X") of a
  // category it attributes (ranges, operators, launches, GPU work).
  EventKind kind_of(const Json &event) const {
    if (!event.is_object())
      return EventKind::unused;
    const std::string phase = text_member(event, "ph");
    if (phase == "i" && text_member(event, "name") == "[memory]")
      return member(member(event, "args"), "Device Type") == Json(0) ||
                     member(member(event, "args"), "Device Type") == Json(1)
                 ? EventKind::memory
                 : EventKind::unused;
    static const std::set<std::string, std::less<>> read_categories{
        "user_annotation", "cpu_op", "cuda_runtime", "cuda_driver",
        "kernel",          "gpu_memcpy", "gpu_memset"};
    return phase == "X" && read_categories.count(text_member(event, "cat")) > 0
               ? EventKind::complete
               : EventKind::unused;
  }

  void read_event(const Json &event, std::size_t index, EventKind kind) {
    if (kind == EventKind::memory)
      read_memory_event(event, index);
    if (kind != EventKind::complete)
      return;
    const std::string category = event["cat"].get<std::string>();
    const std::string name =
        event.contains("name") && event["name"].is_string() ? event["name"].get<std::string>() : "";
    const std::uint64_t start = nanoseconds(member(event, "ts"), index, "ts");
    const Json &duration = member(event, "dur");
    const std::uint64_t end =
        start + (duration.is_null() ? 0 : nanoseconds(duration, index, "dur"));
    const Json &args = event.contains("args") && event["args"].is_object() ? event["args"] : empty_;
    const std::string thread = thread_of(event, index);
    if (category == "user_annotation") {
      std::optional<PhaseId> phase = parse_range_name(name);
      const bool pipelining = !phase;
      if (!phase)
        phase = pipelining_range(name, rank_);
      if (phase) {
        phase_spans_[thread].push_back({start, end, phases_.size(), index});
        phases_.push_back(*phase);
        from_pipelining_.push_back(pipelining);
      } else if (name.starts_with("PP:") && name.ends_with("OVERLAP_F_B")) {
        ++overlapped_ranges_;
      }
    } else if (category == "cpu_op") {
      Operator op;
      op.name = name;
      const auto read_lists = [&](const char *field,
                                  std::vector<std::vector<std::int64_t>> &lists) {
        if (!args.contains(field) || !args[field].is_array())
          return;
        for (const Json &dims : args[field]) {
          std::vector<std::int64_t> shape;
          if (dims.is_array())
            for (const Json &d : dims)
              if (d.is_number_integer()) {
                // Products of a few sizes stay within 64 bits (docs/reliability.md, "Limits").
                const std::int64_t size = d.get<std::int64_t>();
                if (size < 0 || size > kMaxTensorSize)
                  fail(fmt::format("event {}: \"{}\" holds a size out of range ({}; at most "
                                   "2^40 a dimension)",
                                   index, field, size));
                shape.push_back(size);
              }
          lists.push_back(std::move(shape));
        }
      };
      read_lists("Input Dims", op.input_dims);
      read_lists("Input Strides", op.input_strides);
      if (name == "record_param_comms") {
        if (args.contains("Collective name") && args["Collective name"].is_string())
          op.collective = args["Collective name"].get<std::string>();
        if (args.contains("In msg nelems") && args["In msg nelems"].is_number_unsigned() &&
            args.contains("dtype") && args["dtype"].is_string())
          if (__builtin_mul_overflow(args["In msg nelems"].get<std::uint64_t>(),
                                     dtype_bytes(args["dtype"].get<std::string>()), &op.bytes))
            fail(fmt::format("event {}: \"In msg nelems\" is out of range ({} elements of {})",
                             index, args["In msg nelems"].get<std::uint64_t>(),
                             shown_json(args["dtype"])));
        if ((op.collective == "send" || op.collective == "recv") && args.contains("Rank") &&
            args["Rank"].is_number_integer())
          op.peer = global_rank(args["Rank"].get<int>(), args);
      }
      operator_spans_[thread].push_back({start, end, operators_.size(), index});
      if (name == "record_param_comms")
        communication_spans_[thread].push_back({start, end, operators_.size(), index});
      operators_.push_back(std::move(op));
    } else if (category == "cuda_runtime" || category == "cuda_driver") {
      if (const std::optional<std::int64_t> correlation = correlation_of(args, index))
        launches_[*correlation] = {thread, start, index};
    } else if (category == "kernel" || category == "gpu_memcpy" || category == "gpu_memset") {
      GpuActivity activity{start, end, category == "kernel", name, -1, index};
      if (const std::optional<std::int64_t> correlation = correlation_of(args, index))
        activity.correlation = *correlation;
      gpu_.push_back(std::move(activity));
    }
  }

  // An allocator event of profile_memory=True on "Device Type" 1 (CUDA) or 0 (the host, read in
  // a CPU run; kind_of()): "Bytes"
  // allocated (negative: freed) by the thread that ran the operator.
  void read_memory_event(const Json &event, std::size_t index) {
    const Json &args = event.contains("args") && event["args"].is_object() ? event["args"] : empty_;
    if (!args.contains("Bytes") || !args["Bytes"].is_number_integer())
      return;
    const Json &bytes = args["Bytes"];
    const bool in_range =
        bytes.is_number_unsigned()
            ? bytes.get<std::uint64_t>() <= static_cast<std::uint64_t>(kMaxAllocationBytes)
            : bytes.get<std::int64_t>() >= -kMaxAllocationBytes &&
                  bytes.get<std::int64_t>() <= kMaxAllocationBytes;
    if (!in_range)
      fail(fmt::format("event {}: \"Bytes\" is out of range ({}; at most 2^50 a block)", index,
                       shown_json(bytes)));
    const std::string thread = thread_of(event, index);
    const bool cuda = member(args, "Device Type") == Json(1);
    memory_[cuda ? 1 : 0][thread].emplace_back(nanoseconds(member(event, "ts"), index, "ts"),
                                 args["Bytes"].get<std::int64_t>());
  }

  // The n-th range of a (layer, pass, microbatch), in start order, is repetition n.
  void number_repetitions() {
    std::vector<std::pair<std::uint64_t, std::size_t>> by_start;
    for (const auto &[thread, spans] : phase_spans_)
      for (const CpuSpan &span : spans)
        by_start.emplace_back(span.start, span.index);
    std::sort(by_start.begin(), by_start.end());
    std::vector<PhaseId *> in_start_order;
    for (const auto &[start, index] : by_start)
      in_start_order.push_back(&phases_[index]);
    profiler::number_repetitions(in_start_order, source_);
  }

  // Nests one thread's spans, or refuses the trace where two overlap in part, naming
  // both events; `name_of` names a span by its index.
  template <typename NameOf>
  void nest_or_fail(std::vector<CpuSpan> &spans, const std::string &thread, NameOf name_of) const {
    const std::optional<PartialOverlap> overlap = nest(spans, kTraceResolutionNs);
    if (!overlap)
      return;
    const CpuSpan &first = *overlap->first, &second = *overlap->second;
    fail(fmt::format("event {} ({}) starts inside event {} ({}) on thread {} and ends {} us after "
                     "it: the ranges and operators of one thread must nest (docs/profiler.md, "
                     "\"Import a PyTorch trace\")",
                     second.event, shown_text(name_of(second.index)), first.event,
                     shown_text(name_of(first.index)), shown_text(thread),
                     microseconds(second.end - first.end)));
  }

  struct PhaseAt {
    std::size_t index;  ///< into phases_
    bool other_thread;  ///< the range is on another thread of the process
  };

  // The innermost phase range around `time` on `thread`; when that thread has none (autograd's
  // threads run the backward of a range opened around `loss.backward()`), the innermost one of
  // the only other thread of the same process with a range open then. None when several are.
  std::optional<PhaseAt> phase_at(const std::string &thread, std::uint64_t time) const {
    if (const auto own = phase_spans_.find(thread); own != phase_spans_.end())
      if (const std::optional<std::size_t> at = innermost_span(own->second, time))
        return PhaseAt{own->second[*at].index, false};
    const std::string &process = process_of_.at(thread);
    std::optional<PhaseAt> found;
    for (const auto &[other, spans] : phase_spans_) {
      if (other == thread || process_of_.at(other) != process)
        continue;
      if (const std::optional<std::size_t> at = innermost_span(spans, time)) {
        if (found)
          return std::nullopt;
        found = PhaseAt{spans[*at].index, true};
      }
    }
    return found;
  }

  // The parts of `intervals` outside `holes` (both sorted).
  static std::vector<TimedInterval> subtract(const std::vector<TimedInterval> &intervals,
                                             const std::vector<TimedInterval> &holes) {
    std::vector<TimedInterval> rest;
    for (const TimedInterval &interval : intervals) {
      std::uint64_t from = interval.start;
      for (const TimedInterval &hole : holes) {
        if (hole.end <= from || hole.start >= interval.end)
          continue;
        if (hole.start > from)
          rest.push_back({from, hole.start, true});
        from = std::max(from, hole.end);
      }
      if (from < interval.end)
        rest.push_back({from, interval.end, true});
    }
    return rest;
  }

  // The index of the innermost span of the launch's thread around its time, if any.
  static std::optional<std::size_t>
  innermost(const std::map<std::string, std::vector<CpuSpan>> &spans, const Launch &launch) {
    const auto found = spans.find(launch.thread);
    if (found == spans.end())
      return std::nullopt;
    const std::optional<std::size_t> at = innermost_span(found->second, launch.time);
    if (!at)
      return std::nullopt;
    return found->second[*at].index;
  }

  // Per layer, the weights its forward `aten::linear` calls used: (out, in) and the tokens.
  std::map<std::uint16_t, std::set<Weight>> forward_weights() const {
    std::map<std::uint16_t, std::set<Weight>> weights;
    for (const auto &[thread, phase_spans] : phase_spans_) {
      const auto ops = operator_spans_.find(thread);
      if (ops == operator_spans_.end())
        continue;
      const std::vector<CpuSpan> &list = ops->second;
      for (const CpuSpan &range : phase_spans) {
        const PhaseId &phase = phases_[range.index];
        if (phase.pass != Pass::forward)
          continue;
        auto first =
            std::lower_bound(list.begin(), list.end(), range.start,
                             [](const CpuSpan &span, std::uint64_t t) { return span.start < t; });
        for (auto it = first; it != list.end() && it->start < range.end; ++it) {
          const CpuSpan &span = *it;
          const Operator &op = operators_[span.index];
          if (span.end > range.end || op.name != "aten::linear")
            continue;
          if (op.input_dims.size() < 2 || op.input_dims[0].empty() || op.input_dims[1].size() != 2)
            continue;
          std::int64_t tokens = 1;
          for (std::size_t d = 0; d + 1 < op.input_dims[0].size(); ++d) {
            if (__builtin_mul_overflow(tokens, op.input_dims[0][d], &tokens))
              fail(fmt::format("an aten::linear input of range {} has more than 2^63 tokens",
                               nvtx_range_name(phase)));
          }
          weights[phase.layer].insert({op.input_dims[1][0], op.input_dims[1][1], tokens});
        }
      }
    }
    return weights;
  }

  enum class Role { input_gradient, weight_gradient, ambiguous };

  // The role of a backward matrix multiply [a, k] x [k, b] (the operator `mm`), from the
  // weights (out, in) and token counts T of the layer's forward `aten::linear` calls. PyTorch's
  // linear backward computes the weight gradient as dY^T x X, [out, T] x [T, in] (or X^T x dY,
  // [in, T] x [T, out]): contracted over the tokens, output the weight's shape. The input
  // gradient is dY x W, [T, out] x [out, in], contracted over the weight's rows (or, for a
  // column-major input, W^T x dY^T, [in, out] x [out, T]). When tokens equal a weight dimension
  // (b = 1, s = h) one multiply can fit both: then the operands' "Input Strides" decide (a weight
  // gradient's first operand is a transposed view, column-major, and its second row-major; both
  // operands of an input gradient are row-major), and without them the role is ambiguous.
  // Anything that fits no weight gradient is B.
  Role gemm_role(const Operator &mm, const std::set<Weight> &weights) {
    if (weights.empty())
      return Role::input_gradient;
    if (mm.name != "aten::mm" || mm.input_dims.size() != 2 || mm.input_dims[0].size() != 2 ||
        mm.input_dims[1].size() != 2 || mm.input_dims[0][1] != mm.input_dims[1][0])
      return Role::input_gradient;
    const std::int64_t a = mm.input_dims[0][0], k = mm.input_dims[0][1], b = mm.input_dims[1][1];
    const bool weight_gradient = std::any_of(weights.begin(), weights.end(), [&](const Weight &w) {
      return w.tokens == k && ((w.rows == a && w.columns == b) || (w.rows == b && w.columns == a));
    });
    if (!weight_gradient)
      return Role::input_gradient;
    const bool input_gradient = std::any_of(weights.begin(), weights.end(), [&](const Weight &w) {
      return (a == w.tokens && k == w.rows && b == w.columns) ||
             (a == w.columns && k == w.rows && b == w.tokens);
    });
    if (!input_gradient)
      return Role::weight_gradient;
    // Both fit: the operands' layout decides when recorded.
    const auto layout =
        [&mm](std::size_t operand) -> int { // 1 row-major, -1 column-major, 0 neither
      if (mm.input_strides.size() != 2 || mm.input_strides[operand].size() != 2)
        return 0;
      const std::vector<std::int64_t> &dims = mm.input_dims[operand],
                                      &strides = mm.input_strides[operand];
      if (dims[0] < 2 || dims[1] < 2)
        return 0;
      if (strides[1] == 1 && strides[0] == dims[1])
        return 1;
      if (strides[0] == 1 && strides[1] == dims[0])
        return -1;
      return 0;
    };
    if (layout(0) == -1 && layout(1) == 1)
      return Role::weight_gradient;
    if (layout(0) == 1 && layout(1) == 1)
      return Role::input_gradient;
    ambiguous_gemm_ = fmt::format("[{}, {}] x [{}, {}]", a, k, k, b);
    return Role::ambiguous;
  }

  static PhaseMetrics metrics_of(const PhaseId &phase, const std::vector<TimedInterval> &list) {
    PhaseMetrics metrics;
    metrics.phase = phase;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals;
    std::uint64_t first = UINT64_MAX, last = 0;
    for (const TimedInterval &interval : list) {
      intervals.emplace_back(interval.start, interval.end);
      first = std::min(first, interval.start);
      last = std::max(last, interval.end);
      if (interval.kernel) {
        metrics.kernel_sum_ns += interval.end - interval.start;
        ++metrics.n_kernels;
      }
    }
    metrics.busy_union_ns = union_length_ns(std::move(intervals));
    metrics.span_ns = list.empty() ? 0 : last - first;
    return metrics;
  }

  const std::string &source_;
  const Json empty_ = Json::object();
  const Json null_;
  std::optional<int> rank_; ///< "distributedInfo": {"rank": ...}
  std::vector<PhaseId> phases_;
  std::map<std::string, std::vector<CpuSpan>> phase_spans_;
  std::vector<Operator> operators_;
  std::map<std::string, std::vector<CpuSpan>> operator_spans_;
  std::map<std::string, std::vector<CpuSpan>> communication_spans_; // record_param_comms only
  std::map<std::int64_t, Launch> launches_;                         // by correlation id
  std::vector<GpuActivity> gpu_;
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::int64_t>>>
      memory_[2];              // by "Device Type" (0 CPU, 1 CUDA): thread -> (time, bytes)
  double base_us_ = 0;         // the earliest "ts" of an event read
  std::size_t base_event_ = 0; // the event that has it
  std::string ambiguous_gemm_; // the shapes of the last ambiguous multiply, for the warning
  std::map<std::string, std::string> process_of_; // thread -> its "pid"
  std::vector<CpuSpan> phase_span_of_;            // by index into phases_, once nested
  // (phase, part) -> timed intervals; part 0 = the range's own pass, 1 = B, 2 = W of a BW range.
  std::map<std::pair<PhaseId, int>, std::vector<TimedInterval>> members_;
  std::map<PhaseId, std::string> ambiguous_; // BW ranges with a GEMM the shapes cannot classify
  std::vector<bool> from_pipelining_; // by index into phases_: named by PyTorch pipelining
  std::size_t overlapped_ranges_ = 0; // PP:(...)OVERLAP_F_B ranges, not timed
  std::vector<std::string> warnings_; // from reading, before attribution
};

} // namespace

CostFile kineto_cost_file(const KinetoImport &import, int warmup) {
  CostFile file = injected_cost_file(summarize_passes(import.phases, warmup), "kineto_import");
  apply_forward_kept_bytes(file, import.forward_kept_bytes, warmup, "allocator events");
  apply_phase_bytes(file, import.transient_bytes, Pass::forward, warmup,
                    {&CostRow::fwd_peak_temp_bytes, "fwd_peak_temp_bytes"}, "allocator events");
  // The whole backward's transient (B's and W's together, one range) is B's: the engine adds W's
  // on top of what B leaves only where a schedule runs them apart.
  apply_phase_bytes(file, import.transient_bytes, Pass::backward_total, warmup,
                    {&CostRow::bwd_input_peak_temp_bytes, "bwd_input_peak_temp_bytes"},
                    "allocator events");
  file.metadata.warnings.insert(file.metadata.warnings.end(), import.warnings.begin(),
                                import.warnings.end());
  return file;
}

std::optional<LinkFit> fit_point_to_point(const std::vector<CommunicationKernel> &kernels) {
  // Ordinary least squares of milliseconds on bytes.
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  std::set<std::uint64_t> sizes;
  for (const CommunicationKernel &k : kernels) {
    if ((k.collective != "send" && k.collective != "recv") || k.bytes == 0)
      continue;
    const double x = static_cast<double>(k.bytes), y = static_cast<double>(k.duration_ns) / 1e6;
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    sizes.insert(k.bytes);
  }
  if (sizes.size() < 2)
    return std::nullopt;
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx); // ms per byte
  if (!(slope > 0))
    return std::nullopt;
  return LinkFit{std::max(0.0, (sy - slope * sx) / n), 1e3 / slope, static_cast<std::size_t>(n)};
}

std::map<std::string, LinkFit> fit_links(const std::vector<CommunicationKernel> &kernels) {
  std::map<std::string, std::vector<CommunicationKernel>> by_link;
  for (const CommunicationKernel &kernel : kernels)
    if (!kernel.link.empty())
      by_link[kernel.link].push_back(kernel);
  std::map<std::string, LinkFit> fits;
  for (const auto &[link, members] : by_link)
    if (const std::optional<LinkFit> fit = fit_point_to_point(members))
      fits.emplace(link, *fit);
  return fits;
}

KinetoImport parse_kineto_trace(std::string_view text, const std::string &source) {
  return TraceReader(text, source).attribute();
}

} // namespace ppsim::profiler
