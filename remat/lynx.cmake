# Reconstructed Lynx overlap model and the recomputation-aware partitioning DP (spec remat.md 7-8).
target_sources(ppsim_remat PRIVATE ${CMAKE_CURRENT_LIST_DIR}/lynx.cpp ${CMAKE_CURRENT_LIST_DIR}/partition.cpp)
