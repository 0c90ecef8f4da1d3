ppsim_add_test(NAME bounds_tests
  SOURCES
    bounds/lower_bounds_test.cpp
    bounds/analyzer_test.cpp
    bounds/closed_forms_test.cpp
    bounds/lifespan_test.cpp
    bounds/exact_test.cpp
  LIBS ppsim_bounds)
# The `bounds` and `optimal` subcommands, run in-process (cli/bounds.cpp, cli/optimal.cpp).
ppsim_add_test(NAME bounds_cli_tests
  SOURCES
    cli/bounds_test.cpp
    cli/optimal_test.cpp
  LIBS ppsim_cli_lib)
