// `ppsim profile` in process (cli/profile.cpp): the clear no-GPU error on a machine without one,
// the analytic output, atomic writes and option errors.
#include "base/text_file.h"
#include "cli/commands.h"

#include "costs/cost_file.h"
#include "profiler/cost_model.h"
#include "profiler/driver_probe.h"
#include "tests/profiler/machine.h"

#include <cstdlib>
#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

namespace ppsim::cli {
namespace {

struct Run {
  int code;
  std::string out;
  std::string err;
};

Run profile(const Args &args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = guarded(&run_profile, args, out, err);
  return {code, out.str(), err.str()};
}

const Args kSmall{"--hidden", "64", "--heads", "4", "--seq", "16", "--layers", "2"};

Args with(Args args, std::initializer_list<std::string> more) {
  args.insert(args.end(), more);
  return args;
}

std::string temp_path(const std::string &name) {
  return (std::filesystem::temp_directory_path() / ("ppsim_profile_test_" + name)).string();
}

using profiler::testing::machine_has_gpu;

const std::string kStubDriver = "/usr/local/cuda/lib/stubs/libcuda.so";

} // namespace

TEST_CASE("issue_6_no_gpu_message: without a GPU, ppsim profile fails with one clear line" *
          doctest::skip(machine_has_gpu())) {
  const std::string output = temp_path("no_gpu.csv");
  std::filesystem::remove(output);
  const Run run = profile(with(kSmall, {"-o", output}));
  CHECK(run.code == kUserError);
  const std::string problem = profiler::probe_driver(*profiler::system_driver()).problem;
  CHECK(run.err == "ppsim: error: " + problem +
                       "; ppsim profile needs an NVIDIA GPU (use --analytic, or --allow-no-gpu, "
                       "for the analytic cost model)\n");
  CHECK(run.out.empty());
  CHECK_FALSE(std::filesystem::exists(output)); // never a half file
  // The other timer and mode need the GPU just as much, and say so the same way.
  const Run events =
      profile(with(kSmall, {"--timer", "cuda-events", "--mode", "sequence", "-o", output}));
  CHECK(events.code == kUserError);
  CHECK(events.err == run.err);
  CHECK_FALSE(std::filesystem::exists(output));
}

TEST_CASE("this machine: libcuda.so.1 is absent, so the message names it" *
          doctest::skip(machine_has_gpu() ||
                        std::filesystem::exists("/usr/lib/x86_64-linux-gnu/libcuda.so.1"))) {
  CHECK(profile(kSmall).err ==
        "ppsim: error: no NVIDIA driver: libcuda.so.1 not loadable; ppsim profile needs an NVIDIA "
        "GPU (use --analytic, or --allow-no-gpu, for the analytic cost model)\n");
}

TEST_CASE("the toolkit's stub driver is reported as such" *
          doctest::skip(!std::filesystem::exists(kStubDriver))) {
  const Run run = profile(with(kSmall, {"--driver-library", kStubDriver}));
  CHECK(run.code == kUserError);
  CHECK(run.err == "ppsim: error: only the CUDA stub driver was found (cuInit returned 34, "
                   "CUDA_ERROR_STUB_LIBRARY); ppsim profile needs an NVIDIA GPU (use --analytic, "
                   "or --allow-no-gpu, for the analytic cost model)\n");
}

TEST_CASE("--analytic writes the analytic cost file to stdout") {
  const Run run = profile(with(kSmall, {"--analytic", "--device", "ideal"}));
  REQUIRE(run.code == kOk);
  CHECK(run.err.empty());
  const CostFile parsed = parse_cost_csv(run.out, "stdout");
  profiler::BlockShape shape;
  shape.hidden = 64;
  shape.heads = 4;
  shape.seq = 16;
  const CostFile expected =
      profiler::analytic_cost_file(shape, 2, profiler::device_preset("ideal"));
  REQUIRE(parsed.rows.size() == 2);
  CHECK(parsed.rows[0] == expected.rows[0]);
  CHECK(parsed.rows[1] == expected.rows[1]);
}

TEST_CASE("-o FILE.json writes JSON atomically and reports it") {
  const std::string output = temp_path("costs.json");
  std::filesystem::remove(output);
  const Run run = profile(with(kSmall, {"--analytic", "-o", output, "--efficiency", "0.25"}));
  REQUIRE(run.code == kOk);
  CHECK(run.out == "ppsim: wrote 2 analytic layer rows to " + output + "\n");
  const CostFile parsed = read_cost_file(output);
  CHECK(parsed.rows.size() == 2);
  CHECK(parsed.metadata.h == 64);
  CHECK(parsed.metadata.timer == "analytic");
  CHECK(ppsim::read_text_file(output, "file").rfind("{", 0) == 0);
  for (const auto &entry :
       std::filesystem::directory_iterator(std::filesystem::temp_directory_path())) {
    CHECK(entry.path().filename().string().find("ppsim_profile_test_costs.json.tmp") ==
          std::string::npos);
  }
  std::filesystem::remove(output);
}

TEST_CASE("--allow-no-gpu falls back to the analytic rows with a warning" *
          doctest::skip(machine_has_gpu())) {
  const Run run = profile(with(kSmall, {"--allow-no-gpu", "--format", "json"}));
  CHECK(run.code == kOk);
  CHECK(run.err.rfind("ppsim: warning: ", 0) == 0);
  CHECK(run.err.find("writing the analytic cost model (--allow-no-gpu)") != std::string::npos);
  CHECK(parse_cost_json(run.out, "stdout").rows.size() == 2);
}

TEST_CASE("option errors are one line naming the option") {
  CHECK(profile({"--analytic", "--hidden", "16", "--heads", "5"}).err ==
        "ppsim: error: field '--heads': 5 heads do not divide the hidden size 16\n");
  CHECK(profile(with(kSmall, {"--analytic", "--format", "xml"})).err ==
        "ppsim: error: field '--format': expected csv or json, got \"xml\"\n");
  CHECK(profile(with(kSmall, {"--analytic", "--model", "bert"})).err ==
        "ppsim: error: field '--model': expected gpt or llama, got \"bert\"\n");
  CHECK(profile(with(kSmall, {"--analytic", "--efficiency", "1.5"})).err ==
        "ppsim: error: field '--efficiency': expected a number in (0, 1]\n");
  CHECK(profile({"--analytic", "--hidden", "64", "--heads", "4", "--layers", "0"}).err ==
        "ppsim: error: field '--layers': expected an integer from 1 to 100000, got 0\n");
  // Issue 17: a tiny throughput once wrapped fwd_ms to -9223372036854.775808; a huge --layers
  // ended in bad_alloc (docs/reliability.md, "Limits").
  CHECK(profile({"--analytic", "--hidden", "64", "--heads", "4", "--layers", "-1"}).err ==
        "ppsim: error: field '--layers': expected an integer from 1 to 100000, got -1\n");
  CHECK(profile({"--analytic", "--layers", "10000000"}).err ==
        "ppsim: error: field '--layers': expected an integer from 1 to 100000, got 10000000\n");
  CHECK(
      profile({"--analytic", "--efficiency", "1e-300"}).err ==
      "ppsim: error: field '--efficiency': expected 0.0001 to 1, got 1e-300: a layer's time would "
      "leave the range of a cost file\n");
  CHECK(profile({"--analytic", "--peak-tflops", "1e-30"}).err ==
        "ppsim: error: field '--peak-tflops': expected 0.001 to 1000000 TFLOP/s, got 1e-30\n");
  const Run slowest = profile({"--analytic", "--hidden", "8192", "--heads", "64", "--seq", "4096",
                               "--peak-tflops", "0.001", "--efficiency", "0.0001"});
  CHECK(slowest.code == kUserError);
  CHECK(slowest.err.find("field '--peak-tflops': a layer of") != std::string::npos);
  CHECK(profile(with(kSmall, {"--analytic", "--timer", "nvml"})).err ==
        "ppsim: error: field '--timer': expected cupti or cuda-events, got \"nvml\"\n");
  CHECK(profile(with(kSmall, {"--analytic", "--mode", "pipelined"})).err ==
        "ppsim: error: field '--mode': expected isolated or sequence, got \"pipelined\"\n");
  // Events come only from measuring with the cupti timer.
  CHECK(profile(with(kSmall, {"--analytic", "--events", "e.ndjson"})).err ==
        "ppsim: error: field '--events': events are recorded by measuring with the cupti timer\n");
  CHECK(profile(with(kSmall, {"--timer", "cuda-events", "--events", "e.ndjson"})).err ==
        "ppsim: error: field '--events': events are recorded by measuring with the cupti timer\n");
  const Run unknown = profile({"--hiden", "4"});
  CHECK(unknown.code == kUserError);
  CHECK(unknown.err.rfind("ppsim: error: ", 0) == 0);
}

TEST_CASE("--help lists the options") {
  const Run run = profile({"--help"});
  CHECK(run.code == kOk);
  for (const char *option :
       {"--hidden", "--heads", "--seq", "--layers", "--batch", "--ffn", "--dtype", "--tp",
        "--microbatches", "--reps", "--warmup", "--output", "--format", "--analytic",
        "--allow-no-gpu", "--cupti-path", "--events"}) {
    CHECK_MESSAGE(run.out.find(option) != std::string::npos, option);
  }
}

} // namespace ppsim::cli

namespace ppsim::cli {

TEST_CASE("profile import: a PyTorch trace into a cost file with B and W split, warm-up dropped") {
  const std::string trace = PPSIM_SOURCE_DIR "/tests/profiler/traces/kineto_one_block.json";
  const Run run = profile({"import", trace, "--warmup", "1"});
  CHECK(run.code == 0);
  CHECK(run.out.find("1,3,layer3,measured,0.012,0.022,0.033,0.055,") != std::string::npos);
  CHECK(
      run.err ==
      "ppsim: 12 kernels: 6 in layer ranges (2 BW ranges split into B and W), 5 NCCL (0.27 ms, not "
      "layer time), 1 outside every range\n"
      "ppsim: point-to-point fit over 3 send/recv kernels: latency 0.01 ms, bandwidth 50 GB/s "
      "(--comm 0.01 --bandwidth 50GB/s)\n");
  // measured activation bytes, and the transients above them (issue_29)
  CHECK(run.out.find(",4096,1024,2048,1,kineto_import\n") != std::string::npos);
  const std::string links = temp_path("links.csv");
  CHECK(profile({"import", trace, "--links", links}).code == 0);
  std::ifstream in(links);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "collective,link,bytes,ms\nallreduce,,2048,0.05\nallreduce,,2048,0.05\nsend,4->8,"
                "1000000,0.03\n"
                "send,4->8,4000000,0.09\nrecv,0->4,2000000,0.05\n");
  std::filesystem::remove(links);
  const Run all_warmup = profile({"import", trace, "--warmup", "2"});
  CHECK(all_warmup.code == 1);
  CHECK(all_warmup.err.find("every range is a warm-up iteration (--warmup 2)") !=
        std::string::npos);
  const auto write = [](const std::string &name, const std::string &text) {
    const std::string path = temp_path(name);
    std::ofstream(path) << text;
    return path;
  };
  const std::string cpu_only =
      write("cpu_only.json",
            "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"user_annotation\", "
            "\"name\": \"L00.F.mb0\", \"pid\": 1, \"tid\": 1, \"ts\": 0, \"dur\": 10}]}");
  CHECK(profile({"import", cpu_only}).err ==
        "ppsim: error: " + cpu_only +
            ": no GPU work in the trace and no CPU operator inside any phase range (record with "
            "ProfilerActivity.CUDA, or CPU)\n");
  const std::string foreign =
      write("foreign.csv", "Range,Total Proj Time (ns),Range Instances\nstep,900,3\n");
  CHECK(profile({"import", foreign}).err ==
        "ppsim: error: " + foreign +
            ": no range named like L03.F.mb0 or 3/F/0 (layer/pass/microbatch)\n");
  // An nsys summary pools the iterations: --warmup asks for the per-instance trace instead.
  const std::string summary =
      write("summary.csv", "Range,Total Proj Time (ns),Range Instances\nL00.F.mb0,900,3\n");
  CHECK(profile({"import", summary, "--warmup", "1"}).err ==
        "ppsim: error: field '--warmup': an nsys summary pools every iteration: export `nsys stats "
        "-r "
        "nvtx_gpu_proj_trace` (one row per range) to drop warm-up iterations\n");
  // The trace: the warm-up instance (9 us) is dropped, the forward is the median of 2 and 2.2 us.
  const std::string per_range =
      write("per_range.csv", "Name,Projected Start (ns),Projected Duration (ns)\n"
                             "L00.F.mb0,0,9000\nL00.F.mb0,10000,2000\nL00.F.mb0,20000,2200\n");
  const Run trace_run = profile({"import", per_range, "--warmup", "1"});
  CHECK(trace_run.code == 0);
  CHECK(trace_run.out.find("\n1,0,layer0,measured,0.0021,") != std::string::npos);
  CHECK(trace_run.out.find(",2,nsys_import\n") != std::string::npos);
  CHECK(profile({"import", per_range, "--warmup", "3"}).err ==
        "ppsim: error: " + per_range + ": every range is a warm-up iteration (--warmup 3)\n");
  // issue_32: --links on an nsys CSV was accepted and no file written.
  CHECK(profile({"import", per_range, "--links", "links.csv"}).err ==
        "ppsim: error: field '--links': the send/recv kernels come from a PyTorch profiler trace "
        "(JSON), not an nsys projection CSV\n");
  CHECK_FALSE(std::filesystem::exists("links.csv"));
  std::filesystem::remove(cpu_only);
  std::filesystem::remove(foreign);
  std::filesystem::remove(summary);
  std::filesystem::remove(per_range);
  const Run missing = profile({"import"});
  CHECK(missing.code == 1);
  CHECK(missing.err ==
        "ppsim: error: field 'TRACE': give a PyTorch profiler trace (.json) or an nsys CSV\n");
  CHECK(profile({"import", "--help"}).code == 0);
}

TEST_CASE(
    "profile merge: per-rank files join into one model; a missing or repeated layer is one error") {
  const auto write = [](const std::string &name, const std::string &text) {
    const std::string path = temp_path(name);
    std::ofstream(path) << text;
    return path;
  };
  const std::string header = "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n";
  const std::string rank0 = write("rank0.csv", header + "1,0,1.5,2,1\n1,1,1.25,2,1\n");
  const std::string rank1 = write("rank1.csv", header + "1,2,1.75,3,1.5\n");
  const std::string output = temp_path("merged.csv");
  const Run merged = profile({"merge", rank1, rank0, "-o", output});
  CHECK(merged.code == 0);
  const CostFile file = read_cost_file(output);
  REQUIRE(file.rows.size() == 3);
  CHECK(file.rows[2].fwd_ms == Rational{7, 4});
  // What no rank file had stays absent (the reader's defaults), not written as zeros.
  std::ifstream in(output);
  std::string first_line;
  std::getline(in, first_line);
  CHECK(first_line == "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms");
  const Run gap = profile({"merge", rank1});
  CHECK(gap.code == 1);
  CHECK(gap.err == "ppsim: error: layer 0 is in none of the 1 files\n");
  const Run twice = profile({"merge", rank0, rank0});
  CHECK(twice.code == 1);
  CHECK(twice.err ==
        "ppsim: error: " + rank0 + ": field 'layer_id': layer 0 is also in " + rank0 + "\n");
  // A rank file is read on its own only through merge: a model starts at layer 0.
  CHECK_THROWS_WITH(read_cost_file(rank1),
                    doctest::Contains("expected layer id 0 (rows in layer order from 0), got 2"));
  for (const std::string &path : {rank0, rank1, output})
    std::filesystem::remove(path);
}

} // namespace ppsim::cli

TEST_CASE("scripts/ppsim_annotate.py names a model's blocks as ppsim reads them") {
  // Debian's python3 with a stand-in for torch (tests/profiler/fake_torch) that records the calls.
  const std::string command =
      "PYTHONPATH='" PPSIM_SOURCE_DIR "/tests/profiler/fake_torch:" PPSIM_SOURCE_DIR
      "/scripts' /usr/bin/python3 '" PPSIM_SOURCE_DIR "/tests/profiler/annotate_check.py'";
  CHECK(std::system(command.c_str()) == 0);
}

// With a GPU, scripts/gpu-check is run by itself rather than from here.
TEST_CASE("scripts/gpu-check without a GPU: one line, exit 77" *
          doctest::skip(std::system("nvidia-smi -L 2>/dev/null | grep -q '^GPU'") == 0)) {
  const std::string log = (std::filesystem::temp_directory_path() / "ppsim_gpu_check.out").string();
  const int status =
      std::system(("'" PPSIM_SOURCE_DIR "/scripts/gpu-check' > '" + log + "' 2>&1").c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 77);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "gpu-check: no NVIDIA GPU (nvidia-smi lists none); nothing to check\n");
  std::filesystem::remove(log);
}

namespace ppsim::cli {

TEST_CASE(
    "what the GPU workload cannot measure is refused before the driver probe, on any machine") {
  const std::pair<Args, std::string> cases[] = {
      {{"--model", "llama"},
       "field '--model': the GPU workload measures the gpt block only; use --analytic for llama"},
      {{"--tp", "2"},
       "field '--tp': the GPU workload measures --tp 1 only; use --analytic for tensor "
       "parallelism"},
      {{"--dtype", "fp16"},
       "field '--dtype': the GPU workload runs bf16; --dtype fp16 is for --analytic"},
      {{"--microbatches", "2"},
       "field '--microbatches': the GPU workload times one microbatch per phase; use --reps for "
       "more samples"},
      // Options only the analytic model reads: measuring would ignore them.
      {{"--vocab", "50257"},
       "field '--vocab': the GPU workload measures transformer blocks only; --vocab is for "
       "--analytic"},
      {{"--device", "a100"},
       "field '--device': measured times need no throughput model; --device is for --analytic"},
      {{"--efficiency", "0.4"},
       "field '--efficiency': measured times need no throughput model; --efficiency is for "
       "--analytic"},
      {{"--peak-tflops", "500"},
       "field '--peak-tflops': measured times need no throughput model; --peak-tflops is for "
       "--analytic"}};
  for (const auto &[args, message] : cases) {
    CAPTURE(message);
    const Run run = profile(args);
    CHECK(run.code == 1);
    CHECK(run.err == "ppsim: error: " + message + "\n");
    // The analytic model takes them.
    CHECK(
        profile(with(with(args, {"--analytic"}), {"--hidden", "64", "--heads", "4", "--seq", "16"}))
            .code == 0);
  }
}

} // namespace ppsim::cli

namespace ppsim::cli {

TEST_CASE("profile import and merge: metadata says what the run was, absent stays absent, warnings "
          "on stderr") {
  const auto write = [](const std::string &name, const std::string &text) {
    const std::string path = temp_path(name);
    std::ofstream(path) << text;
    return path;
  };
  // An import records its --warmup and claims no dropout.
  const std::string trace = PPSIM_SOURCE_DIR "/tests/profiler/traces/kineto_one_block.json";
  const Run imported = profile({"import", trace, "--warmup", "1", "--format", "json"});
  REQUIRE(imported.code == 0);
  const CostFile parsed = parse_cost_json(imported.out, "imported.json", LayerIds::ascending);
  CHECK(parsed.metadata.warmup == 1);
  CHECK_FALSE(parsed.metadata.dropout);
  CHECK(parsed.metadata.timer == "kineto_import");
  CHECK(parsed.metadata.b == 0); // a trace does not say its microbatch size
  // --batch records it (docs/profiler.md, "Microbatch sizes"); CSV has nowhere to keep it.
  const Run sized = profile({"import", trace, "--batch", "4", "--format", "json"});
  REQUIRE(sized.code == 0);
  CHECK(parse_cost_json(sized.out, "sized.json", LayerIds::ascending).metadata.b == 4);
  CHECK(profile({"import", trace, "--batch", "4"}).err ==
        "ppsim: error: field '--batch': a CSV cost file has no metadata to record the microbatch "
        "size in: write JSON (-o FILE.json or --format json)\n");
  CHECK(profile({"import", trace, "--batch", "0", "--format", "json"}).err ==
        "ppsim: error: field '--batch': expected an integer from 1 to 16777216, got 0\n");
  // The analytic model records the size it modelled.
  const Run analytic = profile({"--analytic", "--batch", "2", "--layers", "1", "--format", "json"});
  REQUIRE(analytic.code == 0);
  CHECK(parse_cost_json(analytic.out, "analytic.json").metadata.b == 2);

  // A square weight without strides: the warning on stderr, no B or W column.
  std::string square = ppsim::read_text_file(
      PPSIM_SOURCE_DIR "/tests/profiler/traces/kineto_square_weight.json", "file");
  for (std::size_t at = square.find("\"Input Strides\""); at != std::string::npos;
       at = square.find("\"Input Strides\"", at + 1))
    square.replace(at, 15, "\"Input Stridez\"");
  const std::string no_strides = write("no_strides.json", square);
  const Run ambiguous = profile({"import", no_strides});
  CHECK(ambiguous.code == 0);
  CHECK(ambiguous.err.find("(0 BW ranges split into B and W, 1 left whole)") != std::string::npos);
  CHECK(ambiguous.err.find(
            "ppsim: warning: layer 0: a backward aten::mm [4096, 4096] x [4096, 4096] fits both") !=
        std::string::npos);
  CHECK(ambiguous.out.find("bwd_input_ms") == std::string::npos);

  // nsys: an all-reduce inside the backward range is named on stderr.
  const Run nsys =
      profile({"import", PPSIM_SOURCE_DIR "/tests/profiler/traces/nsys_proj_trace_nccl.csv"});
  CHECK(nsys.code == 0);
  CHECK(nsys.err.find("ppsim: warning: layer 0 BW: 2 ranges with NCCL inside (ncclAllReduce)") !=
        std::string::npos);

  // Rank files of a script that marks F and BW merge (no bwd_input_ms column anywhere).
  const std::string header =
      "schema_version,layer_id,layer_name,layer_type,fwd_ms,bwd_total_ms,n_samples,source\n";
  const std::string rank0 = write("fb.rank0.csv", header + "1,0,layer0,measured,1,3,5,cupti\n");
  const std::string rank1 = write("fb.rank1.csv", header + "1,1,layer1,measured,2,,5,cupti\n");
  const Run merged = profile({"merge", rank0, rank1});
  CHECK(merged.code == 0);
  CHECK(merged.out == header + "1,0,layer0,measured,1,3,5,cupti\n1,1,layer1,measured,2,,5,cupti\n");
  // CSV first: the metadata claims what the rows say, not the analytic defaults.
  const Run as_json = profile({"merge", rank0, rank1, "--format", "json"});
  REQUIRE(as_json.code == 0);
  const CostFile merged_json =
      parse_cost_json(as_json.out, "merged.json", LayerIds::from_zero, Required::absent_allowed);
  CHECK(merged_json.metadata.timer == "cupti");
  CHECK_FALSE(merged_json.metadata.dropout);
  CHECK(as_json.out.find("\"timer\": \"analytic\"") == std::string::npos);
  // A JSON rank file later in the list gives its metadata.
  const std::string json1 =
      write("fb.rank1.json", R"({"schema_version": 1, "metadata": {"timer": "cuda_events",
    "warmup": 3, "dropout": false}, "layers": [{"layer_id": 1, "fwd_ms": 2, "bwd_total_ms": 4}]})");
  const Run mixed = profile({"merge", rank0, json1, "--format", "json"});
  REQUIRE(mixed.code == 0);
  const CostFile mixed_json =
      parse_cost_json(mixed.out, "mixed.json", LayerIds::from_zero, Required::absent_allowed);
  CHECK(mixed_json.metadata.timer == "cuda_events");
  CHECK(mixed_json.metadata.warmup == 3);
  for (const std::string &path : {no_strides, rank0, rank1, json1})
    std::filesystem::remove(path);
}

} // namespace ppsim::cli
