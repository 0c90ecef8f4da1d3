ppsim_add_test(NAME cli_tests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/cli_test.cpp
  LIBS ppsim_sim)
add_dependencies(cli_tests ppsim)
