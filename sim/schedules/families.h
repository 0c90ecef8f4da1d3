#pragma once
// Generator functions of every schedule family (one .cpp per family in this folder).
#include "sim/schedules/registry.h"

namespace ppsim::schedules {

// gpipe.cpp (spec schedules.md 1)
Schedule gpipe(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Ticks> gpipe_closed_form(const UniformCosts &costs);
// one_f_one_b.cpp (spec schedules.md 2)
Schedule one_f_one_b(const Scenario &scenario, const GeneratorOptions &options);
Schedule one_f_one_b_split(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Ticks> one_f_one_b_closed_form(const UniformCosts &costs);
std::optional<Ticks> one_f_one_b_split_closed_form(const UniformCosts &costs);
int one_f_one_b_in_flight(int stages, int stage);
// interleaved.cpp (spec schedules.md 3-4)
Schedule interleaved_1f1b(const Scenario &scenario, const GeneratorOptions &options);
Schedule looped_bfs(const Scenario &scenario, const GeneratorOptions &options);
Schedule interleaved_zb(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Ticks> interleaved_1f1b_closed_form(const UniformCosts &costs);
// hanayo.cpp (spec schedules.md 5)
Schedule hanayo(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Ticks> hanayo_closed_form(const UniformCosts &costs);
// zero_bubble_handcrafted.cpp (spec schedules.md 6)
Schedule zb_h1(const Scenario &scenario, const GeneratorOptions &options);
Schedule zb_h2(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Ticks> zb_h1_closed_form(const UniformCosts &costs);
std::optional<Ticks> zb_h2_closed_form(const UniformCosts &costs);
int zb_h1_in_flight(int stages, int stage);
int zb_h2_in_flight(int stages, int stage);
// zb_v.cpp (spec schedules.md 8)
Schedule zb_v(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Ticks> zb_v_closed_form(const UniformCosts &costs);
// zb_auto.cpp (spec schedules.md 7): one generator, caps --K X, p and 2p
Schedule zb_auto(const Scenario &scenario, const GeneratorOptions &options);
Schedule zb_1p(const Scenario &scenario, const GeneratorOptions &options);
Schedule zb_2p(const Scenario &scenario, const GeneratorOptions &options);
// zb_v_greedy.cpp (spec schedules.md 9)
Schedule zb_v_greedy(const Scenario &scenario, const GeneratorOptions &options);
// v_family.cpp (spec schedules.md 10)
Schedule v_min(const Scenario &scenario, const GeneratorOptions &options);
Schedule v_half(const Scenario &scenario, const GeneratorOptions &options);
int v_half_in_flight(int stages, int stage);
// v_auto.cpp (spec schedules.md 11); the search itself is in v_auto.h
Schedule v_auto(const Scenario &scenario, const GeneratorOptions &options);
// dualpipe.cpp (spec schedules.md 12)
Schedule dualpipe(const Scenario &scenario, const GeneratorOptions &options);
Schedule dualpipev(const Scenario &scenario, const GeneratorOptions &options);
// remat_schedules.cpp (spec schedules.md 13)
Schedule allremat_1f1b(const Scenario &scenario, const GeneratorOptions &options);
Schedule full_remat(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Ticks> allremat_1f1b_closed_form(const UniformCosts &costs);

} // namespace ppsim::schedules
