# Reconstructed Lynx and the partitioning DP (remat/lynx.cpp, remat/partition.cpp).
ppsim_add_test(NAME remat_lynx_tests
  SOURCES
    remat/lynx_test.cpp
    remat/partition_test.cpp
  LIBS ppsim_remat)
