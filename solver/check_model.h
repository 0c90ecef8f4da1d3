#pragma once
// Validation of a Model before any backend or writer sees it (internal to ppsim_solver).
#include "solver/milp.h"

namespace ppsim::solver::detail {

/// Throws ppsim::Error naming the first malformed variable or constraint: a name that is not
/// letters, digits and '_' (or starts with a digit) or is repeated, lower > upper, a NaN bound,
/// a non-finite coefficient, a term whose variable index is out of range, a start whose size is
/// not the variable count.
void check_model(const Model &model, const std::vector<double> &start = {});

} // namespace ppsim::solver::detail
