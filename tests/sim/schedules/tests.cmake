# Schedule generators: oracles per family and the registry-wide invariant suite.
ppsim_add_test(NAME sim_schedules_tests
  SOURCES
    sim/schedules/registry_invariants_test.cpp
    sim/schedules/interleaved_test.cpp
    sim/schedules/hanayo_test.cpp
    sim/schedules/zero_bubble_handcrafted_test.cpp
    sim/schedules/zb_v_test.cpp
    sim/schedules/dualpipe_test.cpp
    sim/schedules/remat_schedules_test.cpp
  LIBS ppsim_sim)
include(${CMAKE_CURRENT_LIST_DIR}/greedy_tests.cmake OPTIONAL)
