target_sources(ppsim_sim PRIVATE ${CMAKE_CURRENT_LIST_DIR}/sweep.cpp)
