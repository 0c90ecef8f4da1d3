ppsim_add_test(NAME solver_tests
  SOURCES
    solver/milp_test.cpp
    solver/lp_writer_test.cpp
    solver/cbc_test.cpp
  LIBS ppsim_solver)
