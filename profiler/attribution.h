#pragma once
// Attribution of GPU work to phases (docs/profiler.md, "How measurement works"): around each phase
// ppsim pushes an external correlation id packing (pass, layer, microbatch, repetition); CUPTI
// links it to the correlation id of every API call inside, and kernels carry that correlation id.
// The join is correlation id -> external id -> phase, never timestamp overlap.
#include "profiler/activity.h"

#include <compare>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace ppsim::profiler {

/// CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, the kind ppsim pushes its ids under.
inline constexpr std::uint32_t kPpsimExternalKind = 3;

/// The measured passes, numbered as in the external id (docs/profiler.md, "How measurement works").
enum class Pass : std::uint8_t {
  forward = 1,
  backward_input = 2,
  backward_weight = 3,
  backward_total = 4,
  recompute_full = 5,
  recompute_selective = 6
};

/// "F", "B", "W", "BW", "R", "RS".
std::string_view pass_code(Pass pass);
/// The inverse of pass_code.
std::optional<Pass> pass_from_code(std::string_view code);

/// One measured phase: which pass of which layer for which microbatch, in which repetition.
struct PhaseId {
  Pass pass = Pass::forward;
  std::uint16_t layer = 0;
  std::uint16_t microbatch = 0;
  std::uint16_t repetition = 0;

  friend auto operator<=>(const PhaseId &, const PhaseId &) = default;
};

/// [63:56] schema = 1 | [55:48] pass | [47:32] layer | [31:16] microbatch | [15:0] repetition.
std::uint64_t pack_phase_id(PhaseId phase);
/// nullopt for ids of another schema or pass (foreign external ids).
std::optional<PhaseId> unpack_phase_id(std::uint64_t external_id);

/// The NVTX range mirroring a phase, "L03.B.mb0" (visible in Nsight Systems).
std::string nvtx_range_name(PhaseId phase);
/// Reads "L03.B.mb0" or the injection library's "3/B/0" (layer/pass/microbatch); repetition 0.
std::optional<PhaseId> parse_range_name(std::string_view name);

/// Numbers the repetitions of a trace's phases, given in start order: the n-th range of a
/// (layer, pass, microbatch) is repetition n. Throws Error naming `source` past the 65 536
/// repetitions a PhaseId holds (the counter once wrapped, merging iterations).
void number_repetitions(const std::vector<PhaseId *> &in_start_order, const std::string &source);

/// Per-phase metrics (docs/profiler.md, "How measurement works").
struct PhaseMetrics {
  PhaseId phase;
  std::uint64_t kernel_sum_ns = 0; ///< sum of kernel durations
  std::uint64_t busy_union_ns = 0; ///< union of kernel, memcpy and memset intervals
  std::uint64_t span_ns = 0;       ///< first start to last end
  std::uint32_t n_kernels = 0;
  std::uint64_t copy_bytes = 0; ///< memcpy and memset bytes
  /// Device allocations (cudaMalloc, MEMORY2 records) made inside the phase, and the bytes they
  /// net of the releases made in it: what a forward keeps for its backward when the program
  /// allocates its tensors itself. Zero without memory records.
  std::uint32_t allocations = 0;
  std::int64_t allocated_bytes = 0;
};

/// True for kernels of collective or point-to-point communication (NCCL's names): never layer
/// time, even when launched inside a layer's range.
bool is_communication_kernel(std::string_view name);

/// Phases in id order, and what could not be attributed.
struct Attribution {
  std::vector<PhaseMetrics> phases;
  std::uint32_t communication_kernels = 0; ///< left out of every phase
  std::uint64_t communication_busy_ns = 0;
  std::uint64_t unattributed_busy_ns = 0;
  std::uint32_t unattributed_activities = 0;
  std::uint64_t attributed_busy_ns = 0;
  std::uint32_t zero_timestamp_activities = 0; ///< excluded from every metric
  std::uint32_t unattributed_allocations = 0;  ///< MEMORY2 allocations outside every phase
  std::uint32_t allocations_in_phases = 0;     ///< MEMORY2 allocations inside some phase
};

/// Joins activities to phases. Links may arrive in any buffer order; when one correlation id has
/// several ppsim links, the last recorded wins (CUPTI records only the innermost pushed id).
Attribution attribute(const DecodedActivity &activity);

/// The same join, fed buffer by buffer so that a long run keeps only what it still needs (the
/// injection library): activity without its link waits for a later buffer, at most `max_pending`
/// of it (the oldest then count as unattributed); per-phase intervals are kept until finish().
class IncrementalAttribution {
public:
  explicit IncrementalAttribution(std::size_t max_pending = SIZE_MAX);
  /// Folds one batch of decoded records (which the caller may then discard).
  void add(const DecodedActivity &batch);
  /// The attribution so far; what still waits for a link is unattributed.
  [[nodiscard]] Attribution finish();

private:
  struct Accumulator {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals;
    PhaseMetrics metrics;
    std::uint64_t first_start = UINT64_MAX, last_end = 0;
  };
  /// GPU work or an allocation waiting for the link from its correlation id to a phase.
  using Waiting = std::variant<GpuActivity, MemoryEvent>;
  void place(const Waiting &waiting);
  void unattributed(const Waiting &waiting);

  std::size_t max_pending_;
  std::unordered_map<std::uint32_t, PhaseId> phase_of_;
  std::deque<Waiting> pending_;
  std::map<PhaseId, Accumulator> by_phase_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> unattributed_;
  Attribution result_; ///< the counters
};

/// Length of the union of half-open [start, end) intervals.
std::uint64_t union_length_ns(std::vector<std::pair<std::uint64_t, std::uint64_t>> intervals);

} // namespace ppsim::profiler
