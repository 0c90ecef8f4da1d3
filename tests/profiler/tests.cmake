# Profiler and cost-file suites (spec profiler.md section 6: everything but the kernels runs
# without a GPU; GPU-only cases skip).
ppsim_add_test(NAME cost_file_tests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/../sim/io/cost_file_test.cpp
  LIBS ppsim_sim)

set(profiler_test_sources
  ${CMAKE_CURRENT_LIST_DIR}/activity_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/arena_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/attribution_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cost_model_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/driver_probe_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/event_dump_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/gpu_profile_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kineto_import_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/shared_library_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/stats_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/range_correlator_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/run_plan_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/lsan_suppressions.cpp)
foreach(optional nsys_import reference_block)
  if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/${optional}_test.cpp)
    list(APPEND profiler_test_sources ${CMAKE_CURRENT_LIST_DIR}/${optional}_test.cpp)
  endif()
endforeach()
if(PPSIM_PROFILER_HAS_CUPTI)
  list(APPEND profiler_test_sources
    ${CMAKE_CURRENT_LIST_DIR}/collector_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/cupti_loader_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/decoder_test.cpp
    ${CMAKE_CURRENT_LIST_DIR}/injection_test.cpp)
endif()
# attribution_test decodes synthetic CUPTI buffers; without the headers it is skipped.
if(NOT PPSIM_PROFILER_HAS_CUPTI)
  list(REMOVE_ITEM profiler_test_sources ${CMAKE_CURRENT_LIST_DIR}/attribution_test.cpp)
endif()
ppsim_add_test(NAME profiler_tests SOURCES ${profiler_test_sources} LIBS ppsim_profiler)
if(TARGET ppsim_cupti_inject)
  add_dependencies(profiler_tests ppsim_cupti_inject)
  target_compile_definitions(profiler_tests PRIVATE
    PPSIM_INJECTION_LIBRARY="$<TARGET_FILE:ppsim_cupti_inject>")
endif()

ppsim_add_test(NAME profile_command_tests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/profile_test.cpp
  LIBS ppsim_cli_lib ppsim_profiler)

# GPU comparison of the workload kernels; exits 77 (skipped) without a CUDA device.
if(TARGET ppsim_profiler_kernels)
  add_executable(profiler_gpu_tests ${CMAKE_CURRENT_LIST_DIR}/block_kernels_test.cpp)
  target_link_libraries(profiler_gpu_tests PRIVATE ppsim_profiler_kernels ppsim_profiler doctest::doctest)
  add_test(NAME profiler_gpu_tests COMMAND profiler_gpu_tests)
  set_tests_properties(profiler_gpu_tests PROPERTIES SKIP_RETURN_CODE 77)
endif()
