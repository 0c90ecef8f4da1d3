#pragma once
// Generator functions of every schedule family (one .cpp per family in this folder).
#include "sim/schedules/registry.h"

#include <string_view>

namespace ppsim::schedules {

/// Throws the error of an unmet precondition: how each generator refuses its parameters.
void enforce(const std::optional<Error> &refusal);
/// The error "schedule 'NAME' needs exactly 2 stages per device (v = 2), got v = X" unless the
/// scenario has v = 2 on one pipe (the V placement the V-shaped generators are written for).
std::optional<Error> two_chunks_refusal(std::string_view schedule, const Scenario &scenario);

// gpipe.cpp (docs/schedules.md, "gpipe")
Schedule gpipe(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Ticks> gpipe_closed_form(const UniformCosts &costs);
// one_f_one_b.cpp (docs/schedules.md, "1f1b")
Schedule one_f_one_b(const Scenario &scenario, const GeneratorOptions &options);
Schedule one_f_one_b_split(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Ticks> one_f_one_b_closed_form(const UniformCosts &costs);
std::optional<Ticks> one_f_one_b_split_closed_form(const UniformCosts &costs);
int one_f_one_b_in_flight(int stages, int stage);
// interleaved.cpp (docs/schedules.md, "interleaved-1f1b and looped-bfs")
Schedule interleaved_1f1b(const Scenario &scenario, const GeneratorOptions &options);
Schedule looped_bfs(const Scenario &scenario, const GeneratorOptions &options);
Schedule interleaved_zb(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Error> interleaved_1f1b_precondition(const Scenario &scenario,
                                                   const GeneratorOptions &options);
std::optional<Error> interleaved_zb_precondition(const Scenario &scenario,
                                                 const GeneratorOptions &options);
std::optional<Ticks> interleaved_1f1b_closed_form(const UniformCosts &costs);
// hanayo.cpp (docs/schedules.md, "hanayo")
Schedule hanayo(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Error> hanayo_precondition(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Ticks> hanayo_closed_form(const UniformCosts &costs);
// zero_bubble_handcrafted.cpp (docs/schedules.md, "zb-h1 and zb-h2")
Schedule zb_h1(const Scenario &scenario, const GeneratorOptions &options);
Schedule zb_h2(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Ticks> zb_h1_closed_form(const UniformCosts &costs);
std::optional<Ticks> zb_h2_closed_form(const UniformCosts &costs);
int zb_h1_in_flight(int stages, int stage);
int zb_h2_in_flight(int stages, int stage);
// zb_v.cpp (docs/schedules.md, "zb-v")
Schedule zb_v(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Error> zb_v_precondition(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Ticks> zb_v_closed_form(const UniformCosts &costs);
// zb_auto.cpp (docs/schedules.md, "zb-auto"): one generator, caps --K X, p and 2p
Schedule zb_auto(const Scenario &scenario, const GeneratorOptions &options);
Schedule zb_1p(const Scenario &scenario, const GeneratorOptions &options);
Schedule zb_2p(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Error> zb_auto_precondition(const Scenario &scenario,
                                          const GeneratorOptions &options);
// zb_v_greedy.cpp (docs/schedules.md, "zb-v-greedy")
Schedule zb_v_greedy(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Error> zb_v_greedy_precondition(const Scenario &scenario,
                                              const GeneratorOptions &options);
// v_family.cpp (docs/schedules.md, "v-min and v-half")
Schedule v_min(const Scenario &scenario, const GeneratorOptions &options);
Schedule v_half(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Error> v_min_precondition(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Error> v_half_precondition(const Scenario &scenario, const GeneratorOptions &options);
int v_half_in_flight(int stages, int stage);
// v_auto.cpp (docs/schedules.md, "v-auto"); the search itself is in v_auto.h
Schedule v_auto(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Error> v_auto_precondition(const Scenario &scenario, const GeneratorOptions &options);
// dualpipe.cpp (docs/schedules.md, "dualpipe and dualpipev")
Schedule dualpipe(const Scenario &scenario, const GeneratorOptions &options);
Schedule dualpipev(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Error> dualpipe_precondition(const Scenario &scenario,
                                           const GeneratorOptions &options);
std::optional<Error> dualpipev_precondition(const Scenario &scenario,
                                            const GeneratorOptions &options);
// remat_schedules.cpp (docs/schedules.md, "Remat schedules")
Schedule allremat_1f1b(const Scenario &scenario, const GeneratorOptions &options);
Schedule full_remat(const Scenario &scenario, const GeneratorOptions &options);
std::optional<Ticks> allremat_1f1b_closed_form(const UniformCosts &costs);

} // namespace ppsim::schedules
