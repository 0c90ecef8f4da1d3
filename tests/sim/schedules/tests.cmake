# Schedule generators: oracles per family and the registry-wide invariant suite.
ppsim_add_test(NAME sim_schedules_tests
  SOURCES
    sim/schedules/registry_invariants_test.cpp
    sim/schedules/interleaved_test.cpp
    sim/schedules/hanayo_test.cpp
  LIBS ppsim_sim)
