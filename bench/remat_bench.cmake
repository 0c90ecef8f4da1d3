# Linked from bench/CMakeLists.txt when ppsim_remat is part of the build.
target_link_libraries(remat_bench PRIVATE ppsim_remat)
