ppsim_add_test(NAME remat_tests
  SOURCES
    remat/plan_test.cpp
    remat/stage_remat_ilp_test.cpp
    remat/ilp_corpus_test.cpp
    remat/stage_checkpoint_test.cpp
    remat/rotor_test.cpp
    remat/baselines_test.cpp
    remat/policy_test.cpp
    remat/auto_mode_test.cpp
    remat/enumerate_test.cpp
    remat/checkpoint_levels_test.cpp
  LIBS ppsim_remat)
# `ppsim remat` in-process (cli/remat.cpp), next to the library it prints.
ppsim_add_test(NAME remat_cli_tests
  SOURCES
    cli/remat_test.cpp
  LIBS ppsim_cli_lib)
include(${CMAKE_CURRENT_LIST_DIR}/lynx_tests.cmake OPTIONAL)
