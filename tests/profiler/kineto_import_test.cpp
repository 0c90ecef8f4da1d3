// The PyTorch profiler (kineto) trace importer on a trimmed fixture: two iterations of one block,
// its backward on the autograd thread, an NCCL kernel inside the backward range and an optimizer
// kernel outside every range (docs/profiler.md, "Import a PyTorch trace").
#include "base/error.h"
#include "base/text_file.h"
#include "profiler/kineto_import.h"
#include "profiler/stats.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

namespace ppsim::profiler {
namespace {

const std::string kTrace = PPSIM_SOURCE_DIR "/tests/profiler/traces/kineto_one_block.json";

KinetoImport fixture() { return parse_kineto_trace(read_text_file(kTrace, "trace"), kTrace); }

// The trace at `path` with every `from` replaced by `to` (an argument kineto records renamed).
std::string trace_replacing(const std::string &path, const std::string &from,
                            const std::string &to) {
  std::string text = read_text_file(path, "trace");
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + 1))
    text.replace(at, from.size(), to);
  return text;
}

} // namespace

TEST_CASE("kineto: kernels go to the innermost phase range of their launch; NCCL and the optimizer "
          "do not") {
  const KinetoImport import = fixture();
  CHECK(import.kernels == 12);
  CHECK(import.communication == 5);
  CHECK(import.communication_ns == 270'000);
  CHECK(import.unattributed == 1);
  CHECK(import.split_ranges == 2);
  // Per iteration: F, and BW split into B (the input-gradient GEMM) and W (the weight-gradient
  // GEMM, whose output [32, 16] is the forward weight's shape, contracted over its 16 tokens).
  REQUIRE(import.phases.size() == 8);
  const auto find = [&](Pass pass, int repetition) {
    for (const PhaseMetrics &p : import.phases)
      if (p.phase.pass == pass && p.phase.repetition == repetition)
        return p;
    FAIL("phase missing");
    return PhaseMetrics{};
  };
  CHECK(find(Pass::forward, 1).busy_union_ns == 12'000);
  CHECK(find(Pass::backward_input, 1).busy_union_ns == 22'000);
  CHECK(find(Pass::backward_weight, 1).busy_union_ns == 33'000);
  CHECK(find(Pass::backward_total, 1).busy_union_ns == 55'000);
  // Iteration 0: B [220, 240) and W [245, 275) us: busy 50, span 55 (the NCCL kernel excluded).
  CHECK(find(Pass::backward_total, 0).busy_union_ns == 50'000);
  CHECK(find(Pass::backward_total, 0).span_ns == 55'000);
  CHECK(find(Pass::forward, 0).phase.layer == 3);
}

TEST_CASE(
    "kineto: warm-up iterations dropped, B and W measured, the cost file has what was measured") {
  const KinetoImport import = fixture();
  const CostFile file = kineto_cost_file(import, 1);
  CHECK(
      write_cost_csv(file) ==
      "schema_version,layer_id,layer_name,layer_type,fwd_ms,bwd_input_ms,bwd_weight_ms,bwd_total_"
      "ms,"
      "fwd_ms_p10,fwd_ms_p90,bwd_input_ms_p10,bwd_input_ms_p90,bwd_weight_ms_p10,bwd_weight_ms_p90,"
      "activation_bytes_full,fwd_peak_temp_bytes,bwd_input_peak_temp_bytes,n_samples,source\n"
      "1,3,layer3,measured,0.012,0.022,0.033,0.055,0.012,0.012,0.022,0.022,0.033,0.033,4096,1024,"
      "2048,1,kineto_import\n");
  // The forward kept 8192 bytes in the warm-up and 4096 after it: a workspace freed inside the
  // range, a host allocation and a backward allocation are not activations.
  const PhaseId warm{Pass::forward, 3, 0, 0}, timed{Pass::forward, 3, 0, 1};
  CHECK(import.forward_kept_bytes.at(warm) == 8192);
  CHECK(import.forward_kept_bytes.at(timed) == 4096);
  // issue_29: the transients above the resident memory. The timed forward rose to 4096 + 1024
  // (the workspace) and kept 4096: 1024; the backward (autograd's thread) rose by 2048.
  CHECK(import.transient_bytes.at(warm) == 1024);
  CHECK(import.transient_bytes.at(timed) == 1024);
  CHECK(import.transient_bytes.at(PhaseId{Pass::backward_total, 3, 0, 1}) == 2048);
}

TEST_CASE("kineto: NCCL kernels carry their collective and bytes; sends and receives fit a link") {
  const KinetoImport import = fixture();
  REQUIRE(import.communication_kernels.size() == 5);
  CHECK(import.communication_kernels[0].collective == "allreduce");
  CHECK(import.communication_kernels[0].bytes == 2048); // 1024 BFloat16 elements
  CHECK(import.communication_kernels[2].collective == "send");
  CHECK(import.communication_kernels[2].bytes == 1'000'000);
  // 30, 90 and 50 us for 1, 4 and 2 MB: 10 us + bytes / 50 GB/s.
  const std::optional<LinkFit> fit = fit_point_to_point(import.communication_kernels);
  REQUIRE(fit.has_value());
  CHECK(fit->samples == 3);
  CHECK(fit->latency_ms == doctest::Approx(0.01));
  CHECK(fit->bandwidth_bytes_per_second == doctest::Approx(50e9));
  // One size, or time not growing with size, gives no fit.
  CHECK_FALSE(fit_point_to_point({{"send", 100, 1000, ""}, {"recv", 100, 2000, ""}}).has_value());
  CHECK_FALSE(fit_point_to_point({{"send", 100, 2000, ""}, {"recv", 200, 1000, ""}}).has_value());
}

TEST_CASE("kineto: each send and recv has its link, in global ranks; each link is fitted apart") {
  // The trace is rank 4's ("distributedInfo"); its group is global ranks [0, 4, 8]. PyTorch
  // records a send's destination and a recv's source as the group rank "Rank".
  const KinetoImport import = fixture();
  REQUIRE(import.communication_kernels.size() == 5);
  CHECK(import.communication_kernels[0].link.empty()); // an all-reduce has no link
  CHECK(import.communication_kernels[2].link == "4->8");
  CHECK(import.communication_kernels[3].link == "4->8");
  CHECK(import.communication_kernels[4].link == "0->4"); // "Process Group Ranks" as a JSON list
  // The two sends to 8 (1 and 4 MB) fit alone; one recv from 0 is one size: no fit.
  const std::map<std::string, LinkFit> fits = fit_links(import.communication_kernels);
  REQUIRE(fits.size() == 1);
  CHECK(fits.at("4->8").samples == 2);
  CHECK(fits.at("4->8").latency_ms == doctest::Approx(0.01));
  CHECK(fits.at("4->8").bandwidth_bytes_per_second == doctest::Approx(50e9));

  // Two links of different speeds: each gets its own line, the pool neither.
  const std::vector<CommunicationKernel> kernels{
      {"send", 1'000'000, 30'000, "0->1"},
      {"send", 2'000'000, 50'000, "0->1"}, // 10 us + 50 GB/s
      {"send", 1'000'000, 25'000, "1->2"},
      {"send", 3'000'000, 65'000, "1->2"}, // 5 us + 50 GB/s
      {"allreduce", 4096, 9'000, ""}};
  const std::map<std::string, LinkFit> two = fit_links(kernels);
  REQUIRE(two.size() == 2);
  CHECK(two.at("0->1").latency_ms == doctest::Approx(0.01));
  CHECK(two.at("0->1").bandwidth_bytes_per_second == doctest::Approx(50e9));
  CHECK(two.at("1->2").latency_ms == doctest::Approx(0.005));
  CHECK(two.at("1->2").bandwidth_bytes_per_second == doctest::Approx(50e9));

  // Without "distributedInfo" the trace's own rank is unknown.
  std::string text = read_text_file(kTrace, "trace");
  text.erase(text.find("\"distributedInfo\""),
             text.find("\"traceEvents\"") - text.find("\"distributedInfo\""));
  const KinetoImport anonymous = parse_kineto_trace(text, "anonymous.json");
  CHECK(anonymous.communication_kernels[2].link == "?->8");
  CHECK(anonymous.communication_kernels[4].link == "0->?");
}

TEST_CASE("kineto: traces that count microseconds from the epoch read the same") {
  std::string text = read_text_file(kTrace, "trace");
  // Shift every "ts" by 1.7e15 us (PyTorch before 2.4 wrote absolute times).
  std::string shifted;
  for (std::size_t at = 0;;) {
    const std::size_t found = text.find("\"ts\": ", at);
    if (found == std::string::npos) {
      shifted += text.substr(at);
      break;
    }
    const std::size_t value = found + 6, end = text.find_first_of(",}\n", value);
    shifted +=
        text.substr(at, value - at) +
        std::to_string(1'700'000'000'000'000LL + std::stoll(text.substr(value, end - value)));
    at = end;
  }
  const KinetoImport import = parse_kineto_trace(shifted, "absolute.json");
  const KinetoImport relative = fixture();
  REQUIRE(import.phases.size() == relative.phases.size());
  for (std::size_t k = 0; k < import.phases.size(); ++k)
    CHECK(import.phases[k].busy_union_ns == relative.phases[k].busy_union_ns);
}

TEST_CASE("kineto: without recorded shapes only BW is measured") {
  const KinetoImport import = parse_kineto_trace(
      trace_replacing(kTrace, "\"Input Dims\"", "\"Input Type\""), "no-shapes.json");
  CHECK(import.split_ranges == 0);
  CHECK(import.phases.size() == 4); // F and BW, two iterations
}

TEST_CASE("kineto: malformed traces are one error naming the file") {
  CHECK_THROWS_WITH(parse_kineto_trace("{", "t.json"), doctest::Contains("t.json: not valid JSON"));
  CHECK_THROWS_WITH(parse_kineto_trace("{\"a\": 1}", "t.json"),
                    "t.json: not a PyTorch profiler trace: no \"traceEvents\"");
  CHECK_THROWS_WITH(parse_kineto_trace("{\"traceEvents\": []}", "t.json"),
                    doctest::Contains("t.json: no record_function range named like L03.F.mb0"));
  CHECK_THROWS_WITH(
      parse_kineto_trace(
          "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1e400, \"dur\": 1}]",
          "t.json"),
      "t.json: a number is out of range (it must fit a double; docs/reliability.md)");
  CHECK_THROWS_WITH(
      parse_kineto_trace(
          "[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 5, \"dur\": -1}]",
          "t.json"),
      "t.json: event 0: \"dur\" is out of range (-1)");
  // An event whose phase is not a name is not a complete event ("X"): skipped, as other phases.
  CHECK_THROWS_WITH(parse_kineto_trace("[{\"ph\": 3, \"cat\": \"kernel\"}]", "t.json"),
                    doctest::Contains("t.json: no record_function range named like"));
  // A pid nested 100 000 arrays deep once overflowed the stack when serialised as a thread key.
  const std::string nested = std::string(100'000, '[') + std::string(100'000, ']');
  CHECK_THROWS_WITH(
      parse_kineto_trace("[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, "
                         "\"dur\": 1, \"pid\": " +
                             nested + ", \"tid\": 1}]",
                         "t.json"),
      "t.json: event 0: \"pid\" is an array, expected a number or a name");
  CHECK_THROWS_WITH(
      parse_kineto_trace("[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": " +
                             nested + ", \"dur\": 1}]",
                         "t.json"),
      "t.json: event 0: \"ts\" is not a number");
}

} // namespace ppsim::profiler

namespace ppsim::profiler {
namespace {

const std::string kSquare = PPSIM_SOURCE_DIR "/tests/profiler/traces/kineto_square_weight.json";

const PhaseMetrics &phase_of(const KinetoImport &import, Pass pass) {
  for (const PhaseMetrics &p : import.phases)
    if (p.phase.pass == pass)
      return p;
  FAIL("phase missing");
  return import.phases.front();
}

} // namespace

TEST_CASE("kineto: a square weight with tokens == h is split by the operands' strides, on "
          "overlapping streams") {
  // b = 1, s = h = 4096: the projection's input gradient [T, h] x [h, h] and weight gradient
  // [h, T] x [T, h] have the same dims; only the weight gradient's first operand is transposed
  // (strides [1, h]). An elementwise backward kernel on a second stream overlaps two GEMMs.
  const KinetoImport import = parse_kineto_trace(read_text_file(kSquare, "trace"), kSquare);
  CHECK(import.split_ranges == 1);
  CHECK(import.ambiguous_ranges == 0);
  CHECK(import.warnings.empty());
  REQUIRE(import.phases.size() == 4);
  CHECK(phase_of(import, Pass::forward).busy_union_ns == 60'000);
  // B: the MLP's input gradient [220, 260), the GeLU backward [250, 270) on stream 8 and the
  // projection's input gradient [310, 330): union 70 us of 80 us of kernels.
  CHECK(phase_of(import, Pass::backward_input).busy_union_ns == 70'000);
  CHECK(phase_of(import, Pass::backward_input).kernel_sum_ns == 80'000);
  CHECK(phase_of(import, Pass::backward_input).n_kernels == 3);
  // W: the MLP's weight gradient [260, 310) and the projection's [330, 360). (Dims alone took
  // the projection's input gradient for W: W 100 us, B 50.)
  CHECK(phase_of(import, Pass::backward_weight).busy_union_ns == 80'000);
  CHECK(phase_of(import, Pass::backward_weight).n_kernels == 2);
  // BW: the union over both streams, [220, 360), less than B + W because the streams overlap.
  CHECK(phase_of(import, Pass::backward_total).busy_union_ns == 140'000);
  CHECK(phase_of(import, Pass::backward_total).kernel_sum_ns == 160'000);
  CHECK(phase_of(import, Pass::backward_total).span_ns == 140'000);
  CHECK(write_cost_csv(kineto_cost_file(import, 0))
            .find("\n1,0,layer0,measured,0.06,0.07,0.08,0.14,") != std::string::npos);
}

TEST_CASE("kineto: where neither dims nor strides decide, the BW range is not split and a warning "
          "says so") {
  const KinetoImport import = parse_kineto_trace(
      trace_replacing(kSquare, "\"Input Strides\"", "\"Input Stridez\""), "no-strides.json");
  CHECK(import.split_ranges == 0);
  CHECK(import.ambiguous_ranges == 1);
  REQUIRE(import.warnings.size() == 1);
  CHECK(import.warnings[0].find(
            "layer 0: a backward aten::mm [4096, 4096] x [4096, 4096] fits both") == 0);
  REQUIRE(import.phases.size() == 2); // F and BW only: no guessed B or W
  CHECK(phase_of(import, Pass::backward_total).busy_union_ns == 140'000);
  const CostFile file = kineto_cost_file(import, 0);
  CHECK(file.metadata.warnings == import.warnings);
  CHECK(write_cost_csv(file).find("bwd_input_ms") == std::string::npos);

  // Strides that are neither layout (a sliced operand) do not decide either.
  std::string sliced = read_text_file(kSquare, "trace");
  const std::size_t wgrad = sliced.find("sm90_gemm_wgrad_proj");
  const std::size_t strides = sliced.rfind("\"Input Strides\"", wgrad);
  const std::size_t one = sliced.find("1,", strides);
  sliced.replace(one, 2, "2,"); // [1, h] -> [2, h]
  const KinetoImport guessed = parse_kineto_trace(sliced, "sliced.json");
  CHECK(guessed.ambiguous_ranges == 1);
  CHECK(guessed.split_ranges == 0);
}

} // namespace ppsim::profiler

namespace ppsim::profiler {

TEST_CASE("issue_32 kineto: sizes past the limits are refused, sums never wrap") {
  const std::string range =
      "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"L00.F.mb0\", \"pid\": 1, "
      "\"tid\": 1, \"ts\": 0, \"dur\": 100}";
  // The host's allocator (Device Type 0): the trace has no GPU work, so its forwards keep host
  // bytes (issue 30); the sum is the one of a GPU run's device bytes.
  const auto allocation = [](const std::string &bytes) {
    return "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": "
           "10, \"args\": {\"Device Type\": 0, \"Bytes\": " +
           bytes + "}}";
  };
  // One block of 2^63 - 1 bytes: out of range, not a sum that wraps.
  CHECK_THROWS_WITH(
      parse_kineto_trace("[" + range + ", " + allocation("9223372036854775807") + "]", "t.json"),
      "t.json: event 1: \"Bytes\" is out of range (9223372036854775807; at most 2^50 a block)");
  CHECK_THROWS_WITH(
      parse_kineto_trace("[" + range + ", " + allocation("-9223372036854775808") + "]", "t.json"),
      doctest::Contains("event 1: \"Bytes\" is out of range"));
  // 8193 blocks of 2^50 bytes in one range pass 2^63: refused, where the sum once wrapped.
  std::string events = "[" + range;
  for (int k = 0; k < 8193; ++k)
    events += ", " + allocation("1125899906842624");
  CHECK_THROWS_WITH(parse_kineto_trace(events + "]", "t.json"),
                    "t.json: the allocator events of range L00.F.mb0 add up past 2^63 bytes");
  // Tensor sizes: each dimension at most 2^40.
  const auto linear = [&](const std::string &dims) {
    return "[" + range +
           ", {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 1, "
           "\"tid\": 1, \"ts\": 10, \"dur\": 30, \"args\": {\"Input Dims\": " +
           dims + "}}]";
  };
  CHECK_THROWS_WITH(
      parse_kineto_trace(linear("[[4611686018427387904, 4611686018427387904, 16], [32, 16]]"),
                         "t.json"),
      "t.json: event 1: \"Input Dims\" holds a size out of range (4611686018427387904; at most "
      "2^40 a dimension)");
  // Within the limit each, 2^40 x 2^40 x 16 tokens still pass 2^63: refused, never wrapped.
  CHECK_THROWS_WITH(
      parse_kineto_trace(linear("[[1099511627776, 1099511627776, 16, 8], [32, 8]]"), "t.json"),
      "t.json: an aten::linear input of range L00.F.mb0 has more than 2^63 tokens");
  // A message of 2^62 doubles: its size in bytes once wrapped.
  const std::string message =
      "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 1, "
      "\"tid\": 1, \"ts\": 10, \"dur\": 30, \"args\": {\"Collective name\": \"send\", "
      "\"In msg nelems\": 4611686018427387904, \"dtype\": \"Double\"}}";
  CHECK_THROWS_WITH(parse_kineto_trace("[" + range + ", " + message + "]", "t.json"),
                    "t.json: event 1: \"In msg nelems\" is out of range (4611686018427387904 "
                    "elements of \"Double\")");
}

// A complete event ("X") of the given category on thread 1/1, times in microseconds.
std::string complete_event(const std::string &category, const std::string &name, double ts,
                           double dur, const std::string &args = "{}") {
  return fmt::format("{{\"ph\": \"X\", \"cat\": \"{}\", \"name\": \"{}\", \"pid\": 1, "
                     "\"tid\": 1, \"ts\": {}, \"dur\": {}, \"args\": {}}}",
                     category, name, ts, dur, args);
}

TEST_CASE("issue_32 kineto: ranges of one thread that overlap in part are refused, naming both") {
  const std::string forward = complete_event("user_annotation", "L00.F.mb0", 0, 100);
  // B starts inside F and ends 50 us after it: the kernels of [50, 100) belong to neither alone.
  CHECK_THROWS_WITH(
      parse_kineto_trace(
          "[" + forward + ", " + complete_event("user_annotation", "L00.B.mb0", 50, 100) + "]",
          "t.json"),
      "t.json: event 1 (\"L00.B.mb0\") starts inside event 0 (\"L00.F.mb0\") on thread \"1/1\" "
      "and ends 50.000 us after it: the ranges and operators of one thread must nest "
      "(docs/profiler.md, \"Import a PyTorch trace\")");
  // Operators too: the event named is the one that overlaps, whatever the order in the file.
  CHECK_THROWS_WITH(
      parse_kineto_trace("[" + forward + ", " + complete_event("cpu_op", "aten::mm", 30, 20) +
                             ", " + complete_event("cpu_op", "aten::add", 10, 30) + "]",
                         "t.json"),
      doctest::Contains("t.json: event 1 (\"aten::mm\") starts inside event 2 (\"aten::add\")"));
  // Within two microseconds (whole-microsecond traces round start and duration apart) the
  // ranges read as one after the other: each keeps its kernel.
  const std::string launch = complete_event("cuda_runtime", "cudaLaunchKernel", 99.5, 0.2,
                                            "{\"correlation\": 2}");
  const std::string kernel =
      complete_event("kernel", "gemm", 100.5, 10, "{\"correlation\": 2}");
  const KinetoImport touching = parse_kineto_trace(
      "[" + forward + ", " + complete_event("user_annotation", "L00.B.mb0", 99, 50) + ", " +
          launch + ", " + kernel + "]",
      "t.json");
  REQUIRE(touching.phases.size() == 1);
  CHECK(touching.phases[0].phase.pass == Pass::backward_input);
  CHECK(touching.phases[0].busy_union_ns == 10'000);
}

TEST_CASE("issue_32 kineto: a kernel that starts before its launch is refused, naming both") {
  const std::string range = complete_event("user_annotation", "L00.F.mb0", 0, 100);
  const auto trace = [&](double kernel_start) {
    return "[" + range + ", " +
           complete_event("cuda_runtime", "cudaLaunchKernel", 40, 5, "{\"correlation\": 7}") +
           ", " + complete_event("kernel", "gemm", kernel_start, 10, "{\"correlation\": 7}") +
           "]";
  };
  CHECK_THROWS_WITH(parse_kineto_trace(trace(20), "t.json"),
                    "t.json: event 2 (kernel \"gemm\") starts 20.000 us before its launch, event "
                    "1 (correlation 7): the correlation ids do not pair kernels with launches");
  // Within the trace's resolution it is the same time; later is the usual case.
  CHECK(parse_kineto_trace(trace(39), "t.json").phases.at(0).busy_union_ns == 10'000);
  CHECK(parse_kineto_trace(trace(60), "t.json").phases.at(0).busy_union_ns == 10'000);
}

} // namespace ppsim::profiler

namespace ppsim::profiler {

TEST_CASE("issue_32 kineto: times count from the earliest event read; one too late names it") {
  // Epoch microseconds, with a metadata event at ts 0 that the import does not read: it once set
  // the origin, and the first range was refused as out of range.
  const std::string metadata =
      R"({"ph": "M", "name": "process_name", "pid": 1, "ts": 0, "args": {"name": "python"}})";
  const std::string range = complete_event("user_annotation", "L00.F.mb0", 1.7e15, 100);
  const std::string launch = complete_event("cuda_runtime", "cudaLaunchKernel", 1.7e15 + 10, 5,
                                            R"({"correlation": 1})");
  const std::string kernel =
      complete_event("kernel", "gemm", 1.7e15 + 20, 30, R"({"correlation": 1})");
  const KinetoImport import =
      parse_kineto_trace("[" + metadata + ", " + range + ", " + launch + ", " + kernel + "]",
                         "t.json");
  REQUIRE(import.phases.size() == 1);
  CHECK(import.phases[0].busy_union_ns == 30'000);
  // An event read 10^12 us after the earliest read one: the message names that earliest event.
  const std::string early = complete_event("cpu_op", "aten::add", 1.7e15 - 2e12, 1);
  CHECK_THROWS_WITH(
      parse_kineto_trace("[" + metadata + ", " + range + ", " + early + "]", "t.json"),
      "t.json: event 1: \"ts\" is out of range (1700000000000000: more than 10^12 us after the "
      "earliest event, 2)");
}

} // namespace ppsim::profiler

namespace ppsim::profiler {

TEST_CASE("issue_32 kineto: a correlation id past 2^63 or negative is refused, not wrapped") {
  // 2^64 - 1 once wrapped to -1, the mark of GPU work without an id, and paired with it.
  const std::string range = complete_event("user_annotation", "L00.F.mb0", 0, 100);
  for (const std::string id : {"18446744073709551615", "-3"}) {
    const std::string launch = complete_event("cuda_runtime", "cudaLaunchKernel", 10, 1,
                                              "{\"correlation\": " + id + "}");
    const std::string expected =
        "t.json: event 1: \"correlation\" is out of range (" + id + "; a non-negative 64-bit id)";
    CHECK_THROWS_WITH(parse_kineto_trace("[" + range + ", " + launch + "]", "t.json"),
                      expected.c_str());
  }
}

} // namespace ppsim::profiler

namespace ppsim::profiler {
namespace {

// One complete event of a synthetic trace, times in us.
std::string event(const std::string &category, const std::string &name, int tid, double ts,
                  double dur, const std::string &args = "{}") {
  return fmt::format(R"({{"ph": "X", "cat": "{}", "name": "{}", "pid": 1, "tid": {}, "ts": {}, )"
                     R"("dur": {}, "args": {}}})",
                     category, name, tid, ts, dur, args);
}

std::string trace_of(const std::vector<std::string> &events, const std::string &extra = "") {
  return fmt::format(R"({{{}"traceEvents": [{}]}})", extra, fmt::join(events, ", "));
}

const PhaseMetrics &phase_of(const KinetoImport &import, Pass pass, int layer, int microbatch) {
  for (const PhaseMetrics &p : import.phases)
    if (p.phase.pass == pass && p.phase.layer == layer && p.phase.microbatch == microbatch)
      return p;
  FAIL("phase missing");
  return import.phases.front();
}

} // namespace

TEST_CASE("issue_30 kineto: without GPU work the outermost CPU operators of a range are timed, "
          "cut to it; communication apart; W is the weight-gradient multiplies") {
  const std::string linear = R"({"Input Dims": [[2, 8, 16], [32, 16], [32]]})";
  const KinetoImport import = parse_kineto_trace(
      trace_of({
          event("user_annotation", "L00.F.mb0", 1, 0, 100),
          event("cpu_op", "aten::linear", 1, 10, 30, linear),
          event("cpu_op", "aten::addmm", 1, 12, 20),     // inside linear: not counted again
          event("cpu_op", "c10d::send", 1, 50, 5),       // communication
          event("cpu_op", "aten::relu", 1, 60, 10),
          // Opened by a hook inside an autograd operator that began before it (BW 200-300): the
          // operator is outside the range, its operators inside the range are outermost there.
          event("cpu_op", "autograd::engine::evaluate_function: X", 1, 190, 40),
          event("user_annotation", "L00.BW.mb0", 1, 200, 100),
          event("cpu_op", "aten::mm", 1, 205, 10, R"({"Input Dims": [[16, 32], [32, 16]]})"),
          event("cpu_op", "autograd::engine::evaluate_function: MmBackward0", 1, 240, 50),
          event("cpu_op", "aten::mm", 1, 250, 20, R"({"Input Dims": [[32, 16], [16, 16]]})"),
          event("cpu_op", "aten::zeros", 1, 400, 5), // outside every range
      }),
      "cpu.json");
  CHECK(import.cpu_timed);
  CHECK(import.kernels == 4); // linear, relu, the first mm, MmBackward0 (addmm, mm are nested)
  CHECK(import.communication == 1);
  CHECK(import.communication_ns == 5'000);
  CHECK(import.unattributed == 2); // the operator that began before BW, and zeros
  CHECK(phase_of(import, Pass::forward, 0, 0).busy_union_ns == 40'000);
  // BW: [205, 215) and [240, 290): 60 us; W is the multiply whose output [32, 16] is the forward
  // weight, contracted over its 16 tokens: 20 us.
  CHECK(phase_of(import, Pass::backward_total, 0, 0).busy_union_ns == 60'000);
  CHECK(phase_of(import, Pass::backward_weight, 0, 0).busy_union_ns == 20'000);
  CHECK(phase_of(import, Pass::backward_input, 0, 0).busy_union_ns == 40'000);
  CHECK(import.split_ranges == 1);
}

TEST_CASE("issue_30 kineto: a CPU run's activations are the host allocator's, a GPU run's the "
          "device's") {
  const auto allocation = [](double ts, std::int64_t bytes, int device_type) {
    return fmt::format(R"({{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": {}, )"
                       R"("args": {{"Device Type": {}, "Bytes": {}}}}})",
                       ts, device_type, bytes);
  };
  std::vector<std::string> events{
      event("user_annotation", "L00.F.mb0", 1, 0, 100),
      event("cpu_op", "aten::linear", 1, 10, 30),
      allocation(12, 4096, 0),  // kept
      allocation(20, 512, 0),   // a workspace, freed inside
      allocation(30, -512, 0),
      allocation(25, 8192, 1),  // device memory: not a CPU run's
      allocation(150, 1024, 0), // after the range
  };
  const KinetoImport cpu = parse_kineto_trace(trace_of(events), "cpu.json");
  CHECK(cpu.cpu_timed);
  CHECK(cpu.forward_kept_bytes.at(PhaseId{Pass::forward, 0, 0, 0}) == 4096);
  // With GPU work in the trace, only the device's allocations count.
  events.push_back(event("cuda_runtime", "cudaLaunchKernel", 1, 15, 2, R"({"correlation": 1})"));
  events.push_back(event("kernel", "gemm", 7, 20, 10, R"({"correlation": 1})"));
  const KinetoImport gpu = parse_kineto_trace(trace_of(events), "gpu.json");
  CHECK_FALSE(gpu.cpu_timed);
  CHECK(gpu.forward_kept_bytes.at(PhaseId{Pass::forward, 0, 0, 0}) == 8192);
  // issue_29: a backward's transient is the most it rose above its start, also where it frees
  // the activations meanwhile: +1000, -4096, +3000, -1000 peaks 1000 above the start.
  std::vector<std::string> backward{
      event("user_annotation", "L00.BW.mb0", 1, 200, 100), allocation(210, 1000, 0),
      allocation(220, -4096, 0), allocation(230, 3000, 0), allocation(240, -1000, 0),
      event("cpu_op", "aten::mm", 1, 205, 50)};
  events.resize(7); // the CPU run's forward again
  events.insert(events.end(), backward.begin(), backward.end());
  const KinetoImport both = parse_kineto_trace(trace_of(events), "both.json");
  CHECK(both.transient_bytes.at(PhaseId{Pass::forward, 0, 0, 0}) == 512);
  CHECK(both.transient_bytes.at(PhaseId{Pass::backward_total, 0, 0, 0}) == 1000);
  // A backward whose allocations are on another thread (autograd's, under a range opened on the
  // main thread), or with a recomputation inside (a checkpoint's R range, whose rebuilt
  // activations are not the backward's transient), is not measured: no value, not a false 0.
  const auto on_thread_2 = [](double ts, std::int64_t bytes) {
    return fmt::format(R"({{"ph": "i", "name": "[memory]", "pid": 1, "tid": 2, "ts": {}, )"
                       R"("args": {{"Device Type": 0, "Bytes": {}}}}})",
                       ts, bytes);
  };
  std::vector<std::string> elsewhere(events.begin(), events.begin() + 7);
  elsewhere.insert(elsewhere.end(), {event("user_annotation", "L00.BW.mb0", 1, 200, 100),
                                     event("cpu_op", "aten::mm", 1, 205, 50),
                                     on_thread_2(210, 1000), on_thread_2(220, -4096)});
  const KinetoImport other_thread = parse_kineto_trace(trace_of(elsewhere), "other.json");
  CHECK(other_thread.transient_bytes.count(PhaseId{Pass::backward_total, 0, 0, 0}) == 0);
  CHECK(other_thread.transient_bytes.count(PhaseId{Pass::forward, 0, 0, 0}) == 1);
  std::vector<std::string> recomputed(events.begin(), events.begin() + 7);
  recomputed.insert(recomputed.end(),
                    {event("user_annotation", "L00.BW.mb0", 1, 200, 100),
                     event("user_annotation", "L00.R.mb0", 1, 202, 20),
                     event("cpu_op", "aten::linear", 1, 204, 10), allocation(206, 4096, 0),
                     event("cpu_op", "aten::mm", 1, 230, 50), allocation(240, -4096, 0)});
  const KinetoImport checkpointed = parse_kineto_trace(trace_of(recomputed), "ckpt.json");
  CHECK(checkpointed.transient_bytes.count(PhaseId{Pass::backward_total, 0, 0, 0}) == 0);
}

TEST_CASE("issue_30 kineto: PyTorch pipelining's own ranges name stage, pass and microbatch") {
  const std::string gemm = R"({"correlation": 1})";
  const auto timed = [](const std::vector<std::string> &ranges, const std::string &extra = "") {
    std::vector<std::string> events;
    double ts = 0;
    for (const std::string &name : ranges) {
      events.push_back(event("user_annotation", name, 1, ts, 50));
      events.push_back(event("cpu_op", "aten::add", 1, ts + 10, 10));
      ts += 100;
    }
    return parse_kineto_trace(trace_of(events, extra), "pp.json");
  };
  // The runtime's actions: F, I (input gradient), W, B (full backward); sends, receives and
  // overlapped pairs are not compute passes.
  const KinetoImport runtime = timed({"PP:2F5", "PP:2I5", "PP:2W5", "PP:0B1", "PP:1SEND_F0",
                                      "PP:1RECV_B3", "PP:(0F1;3B0)OVERLAP_F_B", "PP:F1", "PP:2F"});
  REQUIRE(runtime.phases.size() == 4);
  CHECK(phase_of(runtime, Pass::forward, 2, 5).busy_union_ns == 10'000);
  CHECK(phase_of(runtime, Pass::backward_input, 2, 5).busy_union_ns == 10'000);
  CHECK(phase_of(runtime, Pass::backward_weight, 2, 5).busy_union_ns == 10'000);
  CHECK(phase_of(runtime, Pass::backward_total, 0, 1).busy_union_ns == 10'000);
  // ScheduleGPipe and Schedule1F1B: "Forward i", "Backward i"; the stage is the trace's rank.
  const KinetoImport single =
      timed({"Forward 0", "Backward 0", "Forward x"}, R"("distributedInfo": {"rank": 3}, )");
  REQUIRE(single.phases.size() == 2);
  CHECK(phase_of(single, Pass::forward, 3, 0).busy_union_ns == 10'000);
  CHECK(phase_of(single, Pass::backward_total, 3, 0).busy_union_ns == 10'000);
  CHECK(timed({"Forward 7"}).phases.at(0).phase.layer == 0); // no rank: stage 0
  // A range of PyTorch's with no work ran in no time (the first stage's I); overlapped pairs
  // are counted in a warning.
  const KinetoImport empty = parse_kineto_trace(
      trace_of({event("user_annotation", "PP:0I3", 1, 0, 50),
                event("user_annotation", "PP:0W3", 1, 100, 50),
                event("cpu_op", "aten::mm", 1, 110, 20),
                event("user_annotation", "PP:(0F1;3B0)OVERLAP_F_B", 1, 200, 50)}),
      "pp.json");
  CHECK(phase_of(empty, Pass::backward_input, 0, 3).busy_union_ns == 0);
  CHECK(phase_of(empty, Pass::backward_input, 0, 3).span_ns == 0);
  CHECK(phase_of(empty, Pass::backward_weight, 0, 3).busy_union_ns == 20'000);
  REQUIRE(empty.warnings.size() == 1);
  CHECK(empty.warnings[0] == "1 overlapped forward-backward pairs (PP:(...)OVERLAP_F_B, "
                             "DualPipeV) not timed: their forward and backward run as one range");
  // With ppsim's layer ranges in the trace, PyTorch's are left out: their ids would collide.
  const KinetoImport mixed = parse_kineto_trace(
      trace_of({event("user_annotation", "PP:0F0", 1, 0, 100),
                event("user_annotation", "L00.F.mb0", 1, 10, 50),
                event("cpu_op", "aten::add", 1, 20, 10)}),
      "mixed.json");
  REQUIRE(mixed.phases.size() == 1);
  CHECK(mixed.phases[0].n_kernels == 1);
  CHECK(mixed.warnings.at(0) == "1 ranges of PyTorch pipelining (PP:...) left out: the trace has "
                                "ppsim's layer ranges, whose ids they would share");
}

TEST_CASE("issue_30 kineto: CPU time inside a nested range is the nested range's, and W is the "
          "multiplies' time inside the counted backward") {
  const std::string weight_gradient = R"({"Input Dims": [[32, 16], [16, 16]]})";
  const KinetoImport import = parse_kineto_trace(
      trace_of({
          event("user_annotation", "L00.F.mb0", 1, 0, 100),
          event("cpu_op", "aten::linear", 1, 10, 30, R"({"Input Dims": [[2, 8, 16], [32, 16]]})"),
          // An outer BW range of layer 1 around layer 0's: an operator spanning both counts its
          // time outside layer 0's range for layer 1, and the rest for layer 0.
          event("user_annotation", "L01.BW.mb0", 1, 200, 200),
          event("cpu_op", "autograd::engine::evaluate_function: X", 1, 210, 100),
          event("user_annotation", "L00.BW.mb0", 1, 250, 100),
          event("cpu_op", "aten::mm", 1, 255, 20, weight_gradient), // nested in X: layer 0's W
          event("cpu_op", "aten::mul", 1, 320, 10),
      }),
      "nested.json");
  // Layer 1: [210, 250) of X; layer 0: [255, 275) of the mm inside X and [320, 330) of mul.
  CHECK(phase_of(import, Pass::backward_total, 1, 0).busy_union_ns == 40'000);
  CHECK(phase_of(import, Pass::backward_total, 0, 0).busy_union_ns == 30'000);
  CHECK(phase_of(import, Pass::backward_weight, 0, 0).busy_union_ns == 20'000);
  CHECK(phase_of(import, Pass::backward_input, 0, 0).busy_union_ns == 10'000);
}

TEST_CASE("issue_30 kineto: kernels launched from autograd's thread belong to the range open on "
          "the process's other thread, and the import says so") {
  const std::vector<std::string> events{
      // A range around loss.backward() on the main thread (tid 1); autograd's thread (tid 2)
      // launches the kernels.
      event("user_annotation", "L00.BW.mb0", 1, 0, 100),
      event("cuda_runtime", "cudaLaunchKernel", 2, 10, 2, R"({"correlation": 1})"),
      event("kernel", "gemm", 9, 20, 30, R"({"correlation": 1})"),
      event("cuda_runtime", "cudaLaunchKernel", 2, 40, 2, R"({"correlation": 2})"),
      event("kernel", "gemm", 9, 60, 20, R"({"correlation": 2})"),
  };
  const KinetoImport import = parse_kineto_trace(trace_of(events), "threads.json");
  CHECK(import.cross_thread == 2);
  CHECK(import.unattributed == 0);
  CHECK(phase_of(import, Pass::backward_total, 0, 0).busy_union_ns == 50'000);
  REQUIRE(import.warnings.size() == 1);
  CHECK(import.warnings[0] == "2 GPU kernels and copies ran on threads without a phase range "
                              "(autograd's) and were attributed to the range open on another "
                              "thread of the process");
  // With ranges open on two other threads at once, the kernel's range is not known.
  std::vector<std::string> two = events;
  two.push_back(event("user_annotation", "L01.BW.mb0", 3, 0, 100));
  const KinetoImport ambiguous = parse_kineto_trace(trace_of(two), "threads.json");
  CHECK(ambiguous.cross_thread == 0);
  CHECK(ambiguous.unattributed == 2);
}

} // namespace ppsim::profiler
