# Cost files (spec profiler.md section 4), owned by the profiler work stream.
find_package(nlohmann_json 3.10 REQUIRED)
target_sources(ppsim_sim PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cost_file.cpp)
target_link_libraries(ppsim_sim PRIVATE nlohmann_json::nlohmann_json)
