#pragma once
// The interactive report (docs/report.md): one self-contained HTML file, its page (HTML, CSS and
// JavaScript under run/report/, embedded at build time) with the run data embedded as JSON. The
// numbers come from the JSON writers of sim/io (report_json, timeline_json), never recomputed.
#include "run/compare.h"
#include "sim/io/report.h"

#include <string>
#include <string_view>
#include <vector>

namespace ppsim {

/// What the page shows above its tables.
struct ReportHeader {
  std::string command; ///< "compare", "remat": the command that ranked the runs
  std::string model;   ///< model name, may be empty
  int devices = 0;
  int microbatches = 0;
  std::string time_unit; ///< the scenario's unit of every time in the data ("ms", "s", "us")
};

/// One ranking (a cap or budget): its heading and its rows, best first, as report_run_json or
/// report_unavailable_json made them.
struct ReportTable {
  std::string heading;
  std::vector<std::string> rows;
};

/// A run of the ranking: its recomputation policy, its summary (report_json), its peak in the
/// unit of the memory curves, and its timeline (timeline_json, with the critical path). The
/// simulation must have memory timelines (SimulateOptions{true}) for the curves.
std::string report_run_json(const SimulationReport &report, std::string_view policy);
/// A schedule that could not run here, with the reason.
std::string report_unavailable_json(std::string_view schedule, std::string_view policy,
                                    std::string_view reason);
/// The data object the page reads.
std::string report_data_json(const ReportHeader &header, const std::vector<ReportTable> &tables);
/// The page of one table of `rows` (runs of `scenario`'s placement, in the order given), headed by
/// the cap they were checked against ("cap 4", "budget 80 GiB") or "no memory cap".
std::string one_table_page(const ReportHeader &header, const Scenario &scenario,
                           std::vector<std::string> rows);
/// The page of every ranking of `compare` (`ppsim report`, `compare --report`, Python's
/// `ppsim.report`): a table per cap, its rows in ranking order. The rankings need memory
/// timelines (EvaluateOptions::timelines) for the curves.
std::string rankings_page(const RunInput &base, const std::vector<Ranking> &rankings);

/// The page with `data_json` embedded in a script element; every `<` of the data is written
/// `\u003c`, so no text in the data can close the element.
std::string report_page(std::string_view data_json);

} // namespace ppsim
