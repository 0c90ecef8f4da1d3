// `ppsim profile` in process (cli/profile.cpp): the clear no-GPU error on a machine without one,
// the analytic output, atomic writes and option errors.
#include "cli/commands.h"

#include "profiler/cost_model.h"
#include "profiler/driver_probe.h"
#include "sim/io/cost_file.h"

#include <doctest/doctest.h>
#include <filesystem>
#include <fstream>
#include <sstream>

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

bool machine_has_gpu() { return profiler::probe_driver(*profiler::system_driver()).ok(); }

std::string read_text(const std::string &path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

} // namespace

TEST_CASE("issue_6_no_gpu_message: without a GPU, ppsim profile fails with one clear line") {
  if (machine_has_gpu()) {
    MESSAGE("a GPU is present: skipped");
    return;
  }
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
  const Run events = profile(with(kSmall, {"--timer", "cuda-events", "--mode", "sequence", "-o", output}));
  CHECK(events.code == kUserError);
  CHECK(events.err == run.err);
  CHECK_FALSE(std::filesystem::exists(output));
}

TEST_CASE("this machine: libcuda.so.1 is absent, so the message names it") {
  std::string why;
  if (machine_has_gpu() || std::filesystem::exists("/usr/lib/x86_64-linux-gnu/libcuda.so.1")) {
    MESSAGE("a driver is installed: skipped");
    return;
  }
  CHECK(profile(kSmall).err ==
        "ppsim: error: no NVIDIA driver: libcuda.so.1 not loadable; ppsim profile needs an NVIDIA "
        "GPU (use --analytic, or --allow-no-gpu, for the analytic cost model)\n");
}

TEST_CASE("the toolkit's stub driver is reported as such") {
  const std::string stub = "/usr/local/cuda/lib/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) {
    MESSAGE("no stub driver: skipped");
    return;
  }
  const Run run = profile(with(kSmall, {"--driver-library", stub}));
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
  CHECK(read_text(output).rfind("{", 0) == 0);
  for (const auto &entry :
       std::filesystem::directory_iterator(std::filesystem::temp_directory_path())) {
    CHECK(entry.path().filename().string().find("ppsim_profile_test_costs.json.tmp") ==
          std::string::npos);
  }
  std::filesystem::remove(output);
}

TEST_CASE("--allow-no-gpu falls back to the analytic rows with a warning") {
  if (machine_has_gpu()) {
    MESSAGE("a GPU is present: skipped");
    return;
  }
  const Run run = profile(with(kSmall, {"--allow-no-gpu", "--format", "json"}));
  CHECK(run.code == kOk);
  CHECK(run.err.rfind("ppsim: warning: ", 0) == 0);
  CHECK(run.err.find("writing the analytic cost model (--allow-no-gpu)") != std::string::npos);
  CHECK(parse_cost_json(run.out, "stdout").rows.size() == 2);
}

TEST_CASE("option errors are one line naming the option") {
  CHECK(profile({"--analytic", "--hidden", "16", "--heads", "5"}).err ==
        "ppsim: error: field 'heads': 5 heads do not divide the hidden size 16\n");
  CHECK(profile(with(kSmall, {"--analytic", "--format", "xml"})).err ==
        "ppsim: error: field 'format': expected csv or json, got \"xml\"\n");
  CHECK(profile(with(kSmall, {"--analytic", "--model", "bert"})).err ==
        "ppsim: error: field 'model': expected gpt or llama, got \"bert\"\n");
  CHECK(profile(with(kSmall, {"--analytic", "--efficiency", "1.5"})).err ==
        "ppsim: error: field 'efficiency': expected a number in (0, 1]\n");
  CHECK(profile({"--analytic", "--hidden", "64", "--heads", "4", "--layers", "0"}).err ==
        "ppsim: error: field 'layers': expected a positive number of layers\n");
  CHECK(profile(with(kSmall, {"--analytic", "--timer", "nvml"})).err ==
        "ppsim: error: field 'timer': expected cupti or cuda-events, got \"nvml\"\n");
  CHECK(profile(with(kSmall, {"--analytic", "--mode", "pipelined"})).err ==
        "ppsim: error: field 'mode': expected isolated or sequence, got \"pipelined\"\n");
  const Run unknown = profile({"--hiden", "4"});
  CHECK(unknown.code == kUserError);
  CHECK(unknown.err.rfind("ppsim: error: ", 0) == 0);
}

TEST_CASE("--help lists the options") {
  const Run run = profile({"--help"});
  CHECK(run.code == kOk);
  for (const char *option : {"--hidden", "--heads", "--seq", "--layers", "--batch", "--ffn",
                             "--dtype", "--tp", "--microbatches", "--reps", "--warmup", "--output",
                             "--format", "--analytic", "--allow-no-gpu", "--cupti-path"}) {
    CHECK_MESSAGE(run.out.find(option) != std::string::npos, option);
  }
}

} // namespace ppsim::cli
