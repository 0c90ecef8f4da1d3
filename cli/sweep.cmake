# `ppsim sweep` reports the best lower bound of each point and applies its remat policy (issue 7).
target_link_libraries(ppsim_cli_lib PRIVATE ppsim_bounds ppsim_remat)
