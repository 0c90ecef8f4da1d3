ppsim_add_test(NAME bounds_tests
  SOURCES
    bounds/lower_bounds_test.cpp
    bounds/closed_forms_test.cpp
    bounds/lifespan_test.cpp
    bounds/exact_test.cpp
  LIBS ppsim_bounds)
