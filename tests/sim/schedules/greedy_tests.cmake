# Greedy and search schedule generators (spec schedules.md 7, 9-11).
ppsim_add_test(NAME sim_schedules_greedy_tests
  SOURCES
    sim/schedules/zb_auto_test.cpp
    sim/schedules/zb_v_greedy_test.cpp
    sim/schedules/v_family_test.cpp
    sim/schedules/v_auto_test.cpp
    sim/schedules/v_grid_test.cpp
  LIBS ppsim_sim)
ppsim_add_test(NAME cli_frontier_tests
  SOURCES
    cli/frontier_test.cpp
  LIBS ppsim_cli_lib)
