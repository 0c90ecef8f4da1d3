// Nsight Systems importer on `nvtx_gpu_proj_sum` and `nvtx_gpu_proj_trace` CSV fixtures.
#include "profiler/nsys_import.h"

#include "base/text_file.h"
#include "tests/base/error_support.h"

#include <doctest/doctest.h>

namespace ppsim::profiler {
namespace {

const char *const kReport =
    "Generating SQLite file report.sqlite from report.nsys-rep\n"
    "Processing [report.sqlite] with [nvtx_gpu_proj_sum.py]... \n"
    "\n"
    "Range,Style,Total Proj Time (ns),Total Range Time (ns),Range Instances,Proj Avg (ns),"
    "Proj Med (ns),Proj Min (ns),Proj Max (ns),Proj StdDev (ns),Total GPU Ops,Avg GPU Ops,"
    "Avg Range Lvl,Avg Num Child\n"
    ":L00.F.mb0,PushPop,20000,25000,10,2000.0,1900.0,1800,2600,10.0,120,12.0,0.0,0.0\n"
    ":L00.F.mb1,PushPop,22000,25000,10,2200.0,2100.0,1700,2500,10.0,120,12.0,0.0,0.0\n"
    "ppsim:L00.B.mb0,PushPop,40000,45000,10,4000.0,4000.0,3900,4100,1.0,200,20.0,0.0,0.0\n"
    "\"optimizer, step\",PushPop,5000,5000,1,5000.0,5000.0,5000,5000,0.0,3,3.0,0.0,0.0\n"
    "1/W/0,StartEnd,9000,9000,3,3000.0,3000.0,3000,3000,0.0,30,10.0,0.0,0.0\n";

// Per-instance rows: three iterations of L00.F.mb0 (the first a slow warm-up), two of L00.B.mb0,
// rows not in start order, a foreign range.
const char *const kTraceReport = "Processing [report.sqlite] with [nvtx_gpu_proj_trace.py]... \n"
                                 "\n"
                                 "Name,Projected Start (ns),Projected Duration (ns),Orig Start "
                                 "(ns),Orig Duration (ns),Style,PID,TID,"
                                 "NumGPUOps,Lvl,NumChild,RangeId,ParentId,RangeStack\n"
                                 ":L00.F.mb0,1000,9000,900,9500,PushPop,1,1,12,0,0,1,,:1\n"
                                 ":L00.B.mb0,12000,4000,11900,4200,PushPop,1,1,20,0,0,2,,:2\n"
                                 ":L00.F.mb0,30000,2000,29900,2100,PushPop,1,1,12,0,0,4,,:4\n"
                                 ":L00.F.mb0,20000,2200,19900,2300,PushPop,1,1,12,0,0,3,,:3\n"
                                 "\"optimizer, step\",25000,500,24900,600,PushPop,1,1,3,0,0,5,,:5\n"
                                 ":L00.B.mb0,33000,3800,32900,3900,PushPop,1,1,20,0,0,6,,:6\n";

std::string error_of(const char *text) {
  return ppsim::testing::error_message([&] { parse_nsys_projection_csv(text, "proj.csv"); });
}

} // namespace

TEST_CASE("ppsim ranges are read, banners and foreign ranges skipped") {
  const NsysImport import = parse_nsys_projection_csv(kReport, "proj.csv");
  REQUIRE(import.ranges.size() == 4);
  CHECK(import.ignored_ranges == 1);
  CHECK(import.ranges[0].phase == PhaseId{Pass::forward, 0, 0, 0});
  CHECK(import.ranges[0].total_projection_ns == 20000);
  CHECK(import.ranges[0].instances == 10);
  CHECK(import.ranges[0].median_ns == 1900);
  CHECK(import.ranges[2].phase == PhaseId{Pass::backward_input, 0, 0, 0});
  CHECK(import.ranges[3].phase == PhaseId{Pass::backward_weight, 1, 0, 0});
}

TEST_CASE("microbatches pool into one (layer, pass) summary") {
  const auto passes = nsys_pass_summaries(parse_nsys_projection_csv(kReport, "proj.csv"));
  REQUIRE(passes.size() == 3);
  CHECK(passes[0].layer == 0);
  CHECK(passes[0].pass == Pass::forward);
  CHECK(passes[0].busy.median_ms == Rational{1, 500}); // (1900 * 10 + 2100 * 10) / 20 ns
  CHECK(passes[0].busy.p10_ms == Rational{17, 10000});
  CHECK(passes[0].busy.p90_ms == Rational{13, 5000});
  CHECK(passes[0].busy.samples == 20);
  std::vector<CostRow> rows(2);
  rows[1].layer_id = 1;
  apply_measurements(rows, passes, "nsys_import");
  CHECK(rows[0].bwd_input_ms == Rational{1, 250});
  CHECK(rows[1].bwd_weight_ms == Rational{3, 1000});
  CHECK(rows[1].source == "nsys_import");
}

TEST_CASE("without median columns the average is used") {
  const NsysImport import = parse_nsys_projection_csv(
      "Range,Total Proj Time (ns),Range Instances\nL02.R.mb0,900,3\n", "proj.csv");
  REQUIRE(import.ranges.size() == 1);
  CHECK(import.ranges[0].median_ns == 300);
  CHECK(import.ranges[0].max_ns == 300);
}

TEST_CASE("huge counts stay exact up to 2^53 and are refused beyond, naming the cell") {
  // 1e15 instances of 2 ns: the instance-weighted mean needs 128 bits on the way (it overflowed).
  const NsysImport import =
      parse_nsys_projection_csv("Range,Total Proj Time (ns),Range Instances,Proj Med "
                                "(ns)\nL00.F.mb0,2000000000000000,1000000000000000,2\n",
                                "proj.csv");
  const std::vector<PassSummary> passes = nsys_pass_summaries(import);
  REQUIRE(passes.size() == 1);
  CHECK(passes[0].busy.median_ms == Rational{1, 500000});
  CHECK(passes[0].busy.samples == 1000000000000000); // carried in 64 bits, not clamped to 2^31 - 1
  CHECK(error_of("Range,Total Proj Time (ns),Range Instances\nL00.F.mb0,10,100000000000000000\n") ==
        "proj.csv:2: field 'Range Instances': 100000000000000000 is too large (at most 2^53)");
}

TEST_CASE(
    "nvtx_gpu_proj_trace: one phase per instance, repetitions in start order, warm-up dropped") {
  const NsysImport import = parse_nsys_projection_csv(kTraceReport, "trace.csv");
  CHECK(import.per_instance);
  CHECK(import.ranges.empty());
  CHECK(import.ignored_ranges == 1);
  REQUIRE(import.instances.size() == 5);
  // File order is kept; the repetition is the rank by projected start.
  CHECK(import.instances[0].phase == PhaseId{Pass::forward, 0, 0, 0});
  CHECK(import.instances[2].phase == PhaseId{Pass::forward, 0, 0, 2}); // starts at 30000
  CHECK(import.instances[3].phase == PhaseId{Pass::forward, 0, 0, 1}); // starts at 20000
  CHECK(import.instances[4].phase == PhaseId{Pass::backward_input, 0, 0, 1});
  CHECK(import.instances[0].busy_union_ns == 9000);
  CHECK(import.instances[0].n_kernels == 12);
  // Without the warm-up the forward is the median of 2200 and 2000 ns, B is 3800 ns.
  const std::vector<PassSummary> passes = summarize_passes(import.instances, 1);
  REQUIRE(passes.size() == 2);
  CHECK(passes[0].pass == Pass::forward);
  CHECK(passes[0].busy.samples == 2);
  CHECK(passes[0].busy.median_ms == Rational{21, 10000});
  CHECK(passes[1].busy.median_ms == Rational{19, 5000}); // 3800 ns
  CHECK(summarize_passes(import.instances, 0)[0].busy.samples == 3);
  CHECK(error_of("Name,Projected Duration (ns)\nL00.F.mb0,10\n") ==
        "proj.csv:1: missing column 'Projected Start (ns)' (expected `nsys stats -r "
        "nvtx_gpu_proj_trace "
        "--format csv`)");
  CHECK(error_of("Name,Projected Start (ns),Projected Duration (ns)\nL00.F.mb0,5,-1\n") ==
        "proj.csv:2: field 'Projected Duration (ns)': expected a non-negative number, got \"-1\"");
}

TEST_CASE("malformed reports name the line and column") {
  CHECK(error_of("Range,Total Proj Time (ns)\n") ==
        "proj.csv:1: missing column 'Range Instances' (expected `nsys stats -r nvtx_gpu_proj_sum "
        "--format csv`)");
  CHECK(error_of("Range,Total Proj Time (ns),Range Instances\nL00.F.mb0,lots,1\n") ==
        "proj.csv:2: field 'Total Proj Time (ns)': expected a non-negative number, got \"lots\"");
  CHECK(error_of("Range,Total Proj Time (ns),Range Instances\nL00.F.mb0,1\n") ==
        "proj.csv:2: expected 3 fields, got 2");
  CHECK(error_of("Range,Total Proj Time (ns),Range Instances\nL00.F.mb0,10,0\n") ==
        "proj.csv:2: field 'Range Instances': expected at least one instance");
  CHECK(error_of("nothing here\n") ==
        "proj.csv: no table of NVTX ranges (expected `nsys stats -r "
        "nvtx_gpu_proj_sum` or `-r nvtx_gpu_proj_trace`, `--format csv`)");
}

TEST_CASE("nsys file: an NCCL range nested in a layer range is warned about, one on another thread "
          "is not") {
  // Two iterations of layer 0 (F on thread 7, BW on autograd's thread 8), each BW with an
  // all-reduce launched inside it (RangeStack ":2:3" names BW's range 2); a pipeline send on
  // thread 9 overlaps the second BW in time but is not inside it.
  const std::string path = PPSIM_SOURCE_DIR "/tests/profiler/traces/nsys_proj_trace_nccl.csv";
  const NsysImport import = parse_nsys_projection_csv(read_text_file(path, "trace"), path);
  REQUIRE(import.per_instance);
  REQUIRE(import.instances.size() == 4);
  CHECK(import.ignored_ranges == 4);
  CHECK(import.communication_ranges == 3);
  CHECK(import.ranges_with_communication == 2);
  REQUIRE(import.warnings.size() == 1);
  CHECK(import.warnings[0] == "layer 0 BW: 2 ranges with NCCL inside (ncclAllReduce): nsys "
                              "projects every GPU operation launched in a "
                              "range, so the communication kernels count as layer time "
                              "(docs/profiler.md, \"Import a PyTorch trace\")");
  // The projected durations stay what nsys reports (the all-reduce's kernels included).
  const std::vector<PassSummary> passes = summarize_passes(import.instances, 1);
  REQUIRE(passes.size() == 2);
  CHECK(passes[1].pass == Pass::backward_total);
  CHECK(passes[1].busy.median_ms == normalized({6, 1000}));

  // Without RangeId and RangeStack, nesting is CPU time on the same thread.
  std::string text = read_text_file(path, "trace");
  std::string without;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(at, end - at);
    if (line.find("PushPop") != std::string::npos || line.find("RangeStack") != std::string::npos) {
      // Drop the last three fields (RangeId, ParentId, RangeStack).
      for (int k = 0; k < 3; ++k)
        line.erase(line.rfind(','));
    }
    without += line + "\n";
    at = end + 1;
  }
  const NsysImport by_time = parse_nsys_projection_csv(without, "by-time.csv");
  CHECK(by_time.ranges_with_communication == 2);
  REQUIRE(by_time.warnings.size() == 1);
  CHECK(by_time.warnings[0].find("layer 0 BW: 2 ranges with NCCL inside (ncclAllReduce)") == 0);
}

TEST_CASE("nsys summary: NCCL ranges in the report are warned about") {
  const std::string summary = std::string(kReport) +
                              "NCCL:ncclAllReduce,PushPop,3000,3000,1,3000.0,3000.0,3000,3000,"
                              "0.0,1,1.0,1.0,0.0\n";
  const NsysImport import = parse_nsys_projection_csv(summary, "proj.csv");
  CHECK(import.communication_ranges == 1);
  REQUIRE(import.warnings.size() == 1);
  CHECK(import.warnings[0].find(
            "the report has NCCL ranges (ncclAllReduce): where one ran inside a layer range") == 0);
  CHECK(parse_nsys_projection_csv(kReport, "proj.csv").warnings.empty());
}

} // namespace ppsim::profiler

namespace ppsim::profiler {

TEST_CASE("issue_17 a pass's samples past 2^31 reach the cost file, never clamped") {
  const NsysImport import = parse_nsys_projection_csv(
      "Range,Total Proj Time (ns),Range Instances\nL00.F.mb0,2000000000,2000000000\n"
      "L00.F.mb1,2000000000,2000000000\n",
      "proj.csv");
  const std::vector<PassSummary> passes = nsys_pass_summaries(import);
  REQUIRE(passes.size() == 1);
  CHECK(passes[0].busy.samples == 4000000000);
  const CostFile file = injected_cost_file(passes, "nsys_import");
  REQUIRE(file.rows.size() == 1);
  CHECK(file.rows[0].n_samples == 4000000000);
  CHECK(write_cost_csv(file).find("4000000000") != std::string::npos);
}

} // namespace ppsim::profiler

namespace ppsim::profiler {

TEST_CASE("issue_32 more repetitions of one range than a phase id holds are refused") {
  // 65 537 iterations of one range: the 16-bit counter once wrapped to 0, merging iterations.
  std::string text = "Name,Projected Start (ns),Projected Duration (ns)\n";
  for (int k = 0; k <= 65'536; ++k)
    text += "L00.F.mb0," + std::to_string(k * 10) + ",5\n";
  CHECK_THROWS_WITH_AS(parse_nsys_projection_csv(text, "many.csv"),
                       "many.csv: more than 65 536 ranges L00.F.mb0: profile fewer iterations",
                       Error);
  text.erase(text.rfind("L00.F.mb0"));
  CHECK(parse_nsys_projection_csv(text, "many.csv").instances.back().phase.repetition == 65'535);
}

TEST_CASE("issue_32 nsys: a huge cell is echoed cut, with its length") {
  const std::string text = "Range,Total Proj Time (ns),Range Instances\nL00.F.mb0," +
                           std::string(5000, '1') + ",1\n";
  CHECK(error_of(text.c_str()) ==
        "proj.csv:2: field 'Total Proj Time (ns)': expected a non-negative number, got \"" +
            std::string(80, '1') + "... (5000 characters)\"");
}

} // namespace ppsim::profiler
