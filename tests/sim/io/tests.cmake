# Chrome trace and SVG Gantt writers; the trace test parses the JSON back with nlohmann-json.
find_package(nlohmann_json 3 REQUIRED)
ppsim_add_test(NAME sim_io_writers_tests
  SOURCES
    sim/io/memory_steps_test.cpp
    sim/io/trace_test.cpp
    sim/io/svg_test.cpp
  LIBS ppsim_sim nlohmann_json::nlohmann_json)
# Sweep files: expansion, ids, shards and results rows (issue 7).
ppsim_add_test(NAME sim_io_sweep_tests
  SOURCES
    sim/io/sweep_test.cpp
  LIBS ppsim_sim)
