# Profiler and cost-file suites (spec profiler.md section 6: everything but the kernels runs
# without a GPU; GPU-only cases skip).
ppsim_add_test(NAME cost_file_tests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/../sim/io/cost_file_test.cpp
  LIBS ppsim_sim)
ppsim_add_test(NAME profiler_tests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/cost_model_test.cpp
  LIBS ppsim_profiler)
