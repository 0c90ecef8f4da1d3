#pragma once
// Generator functions of every schedule family (one .cpp per family in this folder).
#include "sim/schedules/registry.h"

namespace ppsim::schedules {

// gpipe.cpp (spec schedules.md 1)
Schedule gpipe(const Scenario &scenario, const GeneratorOptions &options);
// one_f_one_b.cpp (spec schedules.md 2)
Schedule one_f_one_b(const Scenario &scenario, const GeneratorOptions &options);
Schedule one_f_one_b_split(const Scenario &scenario, const GeneratorOptions &options);

} // namespace ppsim::schedules
