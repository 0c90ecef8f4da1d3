# `ppsim sweep` reports the best lower bound of each point and applies its remat policy (issue 7).
target_link_libraries(ppsim_cli_lib PRIVATE ppsim_bounds ppsim_remat)
# `ppsim plot` runs the scripts of plots/ from the source tree unless PPSIM_PLOTS_DIR says otherwise.
target_compile_definitions(ppsim_cli_lib PRIVATE PPSIM_PLOTS_DIR="${PROJECT_SOURCE_DIR}/plots")
