target_sources(ppsim_sim PRIVATE ${CMAKE_CURRENT_LIST_DIR}/trace.cpp ${CMAKE_CURRENT_LIST_DIR}/svg.cpp)
