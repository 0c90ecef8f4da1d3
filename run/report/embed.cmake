# Inlines report.css and report.js into report.html and writes the result as a C++ header
# (kReportTemplate), so the ppsim binary needs no data files at run time. Run by cli/CMakeLists.txt
# with -DSOURCE_DIR=<this folder> -DOUTPUT=<header>.
file(READ "${SOURCE_DIR}/report.html" page)
file(READ "${SOURCE_DIR}/report.css" style)
file(READ "${SOURCE_DIR}/report.js" script)
foreach(part style script)
  string(FIND "${${part}}" "@PPSIM_REPORT_" marker)
  if(NOT marker EQUAL -1)
    message(FATAL_ERROR "report ${part} must not contain the placeholder prefix @PPSIM_REPORT_")
  endif()
endforeach()
string(REPLACE "@PPSIM_REPORT_CSS@" "${style}" page "${page}")
string(REPLACE "@PPSIM_REPORT_JS@" "${script}" page "${page}")
string(FIND "${page}" ")ppsim_report\"" delimiter)
if(NOT delimiter EQUAL -1)
  message(FATAL_ERROR "the report page must not contain the raw-string delimiter )ppsim_report\"")
endif()
file(WRITE "${OUTPUT}"
  "// Generated from run/report/ by run/report/embed.cmake; do not edit.\n"
  "#pragma once\n#include <string_view>\n\nnamespace ppsim {\n"
  "inline constexpr std::string_view kReportTemplate = R\"ppsim_report(${page})ppsim_report\";\n"
  "} // namespace ppsim\n")
