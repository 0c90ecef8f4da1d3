ppsim_add_test(NAME remat_tests
  SOURCES
    remat/plan_test.cpp
    remat/stage_remat_ilp_test.cpp
    remat/rotor_test.cpp
  LIBS ppsim_remat)
