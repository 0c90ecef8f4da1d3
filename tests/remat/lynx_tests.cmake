# Reconstructed Lynx and the partitioning DP (remat/lynx.cpp, remat/partition.cpp).
ppsim_add_test(NAME remat_lynx_tests
  SOURCES
    remat/lynx_test.cpp
    remat/partition_test.cpp
  LIBS ppsim_remat)
# `ppsim lynx` and `ppsim partition` in-process (cli/lynx.cpp, cli/partition.cpp).
ppsim_add_test(NAME remat_lynx_cli_tests
  SOURCES
    cli/lynx_test.cpp
  LIBS ppsim_cli_lib)
