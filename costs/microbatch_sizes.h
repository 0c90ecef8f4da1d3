#pragma once
// Cost files profiled at several microbatch sizes (docs/profiler.md, "Microbatch sizes"): the
// costs a run at another size reads.
#include "costs/cost_file.h"

#include <cstdint>
#include <vector>

namespace ppsim {

/// The costs at microbatch size `size` from files profiled at the sizes their metadata's `b`
/// records (a JSON file of `ppsim profile`): the file at that size as it is, else each layer's
/// times, FLOPs and bytes interpolated linearly between the two files whose sizes bracket it,
/// exactly for times. Kernels are not linear in the size (a GEMM fills the GPU better at a larger
/// one), so a size outside the measured ones is refused rather than extrapolated.
/// Throws Error naming the file at fault: a file without a recorded size, two files at one size,
/// files whose layers (count, names, types) or columns differ, or a size outside their range.
CostFile cost_file_at_size(const std::vector<CostFile> &files, std::int64_t size);

} // namespace ppsim
