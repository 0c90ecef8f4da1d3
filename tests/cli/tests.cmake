ppsim_add_test(NAME cli_tests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/cli_test.cpp
  LIBS ppsim_sim)
add_dependencies(cli_tests ppsim)
# ppsim sweep and merge end to end (issue 7).
ppsim_add_test(NAME cli_sweep_tests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/sweep_test.cpp
  LIBS ppsim_sim)
add_dependencies(cli_sweep_tests ppsim)
# Smoke test of the plots/ scripts (issue 7).
ppsim_add_test(NAME plots_tests
  SOURCES
    ${CMAKE_SOURCE_DIR}/tests/plots/plot_test.cpp
  LIBS ppsim_sim)
add_dependencies(plots_tests ppsim)
# The shipped paper settings reproduce their published tables (issue 7).
ppsim_add_test(NAME cli_papers_tests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/papers_test.cpp
  LIBS ppsim_sim)
add_dependencies(cli_papers_tests ppsim)
# The model zoo end to end: whole work, device memory, compare on every model (issue 12).
ppsim_add_test(NAME cli_real_models_tests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/real_models_test.cpp
  LIBS ppsim_sim)
add_dependencies(cli_real_models_tests ppsim)
