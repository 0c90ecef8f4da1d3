target_sources(ppsim_sim PRIVATE ${CMAKE_CURRENT_LIST_DIR}/sweep.cpp)
# Run ids hash the version: a resumed sweep redoes the rows of another ppsim (docs/sweep.md).
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/sweep.cpp PROPERTIES
  COMPILE_DEFINITIONS "PPSIM_PROJECT_VERSION=\"${PROJECT_VERSION}\"")
