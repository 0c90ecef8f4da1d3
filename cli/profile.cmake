# `ppsim profile` (issue 6), owned by the profiler work stream.
target_sources(ppsim_cli_lib PRIVATE ${CMAKE_CURRENT_LIST_DIR}/profile.cpp)
target_link_libraries(ppsim_cli_lib PRIVATE ppsim_profiler)
