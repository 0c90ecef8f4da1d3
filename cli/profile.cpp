// `ppsim profile`: per-layer costs of a transformer block, measured on the GPU through CUPTI or,
// with --analytic (or --allow-no-gpu on a machine without one), from the analytic model
// (docs/profiler.md). Parses options, calls the profiler library, writes the cost file.
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/scenario_options.h"

#include "base/decimal.h"
#include "base/error.h"
#include "base/text_file.h"
#include "costs/cost_file.h"
#include "profiler/cost_model.h"
#include "profiler/driver_probe.h"
#include "profiler/gpu_profile.h"
#include "profiler/kineto_import.h"
#include "profiler/nsys_import.h"
#include "profiler/run_plan.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <ostream>

namespace ppsim::cli {
namespace po = boost::program_options;
namespace {

// Largest model dimension accepted on the command line (hidden size, sequence, vocabulary...):
// far above any model, far below where the byte formulas overflow.
constexpr std::int64_t kShapeLimit = std::int64_t{1} << 24;
// A cost file holds one row per layer; 100 000 rows is far past any model and a few MB
// (docs/reliability.md, "Limits").
constexpr std::int64_t kMaxLayers = 100000;
// The throughput the analytic model accepts: below it a layer's time leaves the exact range of
// a cost file (docs/reliability.md, "Limits").
constexpr double kMinPeakTflops = 1e-3;
constexpr double kMaxPeakTflops = 1e6;
constexpr double kMinEfficiency = 1e-4;

po::options_description output_options() {
  po::options_description output("output");
  output.add_options()("help,h", "show this help")("output,o",
                                                   po::value<std::string>()->value_name("FILE"),
                                                   "write to FILE (atomically) instead of stdout")(
      "format", po::value<std::string>(),
      "csv or json (default: from the extension of FILE, else csv)");
  return output;
}

po::options_description profile_options() {
  po::options_description model("model (one transformer block, repeated --layers times)");
  model.add_options()("model", po::value<std::string>()->default_value("gpt"),
                      "block: gpt (LayerNorm, GeLU 4h) or llama (RMSNorm, SwiGLU, GQA)")(
      "hidden", po::value<std::int64_t>()->default_value(4096),
      "hidden size h")("heads", po::value<std::int64_t>()->default_value(32), "attention heads a")(
      "kv-heads", po::value<std::int64_t>()->default_value(0), "KV heads g (llama; 0 = heads)")(
      "ffn", po::value<std::int64_t>()->default_value(0),
      "FFN size f (0 = 4h for gpt, 8h/3 rounded to 256 for llama)")(
      "seq", po::value<std::int64_t>()->default_value(2048), "sequence length s")(
      "batch", po::value<std::int64_t>()->default_value(1),
      "microbatch size b")("layers", po::value<std::int64_t>()->default_value(4),
                           "number of transformer blocks (1 to 100000)")(
      "vocab", po::value<std::int64_t>()->default_value(0),
      "vocabulary size V; > 0 adds the embedding and LM head as layers of their own")(
      "dtype", po::value<std::string>()->default_value("bf16"),
      "activation type: bf16 or fp16")("tp", po::value<std::int64_t>()->default_value(1),
                                       "tensor-parallel size t (per-GPU shard; no communication)")(
      "sequence-parallel", "Megatron sequence parallelism (shards norm and dropout regions)")(
      "no-dropout", "no dropout masks in the stash")(
      "causal-skip", "llama: attention skips masked tiles (halves attention FLOPs)")(
      "attention", po::value<std::string>()->value_name("flash|unfused"),
      "attention core: flash (default with --analytic) or unfused (what the GPU workload runs)");
  po::options_description measure("measurement");
  measure.add_options()("microbatches", po::value<int>()->default_value(1),
                        "microbatches per repetition")("reps", po::value<int>()->default_value(20),
                                                       "timed repetitions")(
      "warmup", po::value<int>()->default_value(5), "untimed warm-up repetitions (>= 3)")(
      "timer", po::value<std::string>()->default_value("cupti"), "cupti or cuda-events")(
      "mode", po::value<std::string>()->default_value("isolated"),
      "isolated or sequence")("cupti-path", po::value<std::string>()->value_name("PATH"),
                              "libcupti to try after libcupti.so.13 and libcupti.so")(
      "driver-library", po::value<std::string>()->default_value("libcuda.so.1")->value_name("PATH"),
      "CUDA driver library to probe")(
      "gpu-module", po::value<std::string>()->value_name("PATH"),
      "the GPU workload module (default: the one built with ppsim)")(
      "events", po::value<std::string>()->value_name("FILE"),
      "also write the decoded CUPTI events as NDJSON (cupti timer), for replay through "
      "attribution");
  po::options_description analytic("analytic model");
  analytic.add_options()("analytic", "write the analytic cost model; needs no GPU")(
      "allow-no-gpu", "without a usable GPU, warn and write the analytic cost model")(
      "device", po::value<std::string>()->default_value("h100"),
      "peak-throughput preset: h100, a100, ideal")(
      "peak-tflops", po::value<double>(), "peak dense 16-bit TFLOP/s (overrides --device)")(
      "efficiency", po::value<double>(), "fraction of the peak achieved (default 0.5)");
  po::options_description all(
      "ppsim profile [options]: per-layer F, B, W and recompute costs\n"
      "       ppsim profile import TRACE | merge RANK_FILE... (--help for each)");
  all.add(model).add(measure).add(analytic).add(output_options());
  return all;
}

profiler::BlockShape shape_from(const po::variables_map &values) {
  profiler::BlockShape shape;
  const std::string model = values["model"].as<std::string>();
  if (model == "gpt") {
    shape.kind = profiler::BlockKind::gpt;
  } else if (model == "llama") {
    shape.kind = profiler::BlockKind::llama;
  } else {
    throw Error("", 0, "model", fmt::format("expected gpt or llama, got \"{}\"",
                                            cut_for_message(model)));
  }
  const std::string dtype = values["dtype"].as<std::string>();
  if (dtype != "bf16" && dtype != "fp16") {
    throw Error("", 0, "dtype", fmt::format("expected bf16 or fp16, got \"{}\"",
                                            cut_for_message(dtype)));
  }
  shape.hidden = static_cast<std::uint64_t>(checked_integer(values, "hidden", 1, kShapeLimit));
  shape.heads = static_cast<std::uint64_t>(checked_integer(values, "heads", 1, kShapeLimit));
  shape.kv_heads = static_cast<std::uint64_t>(checked_integer(values, "kv-heads", 0, kShapeLimit));
  shape.ffn = static_cast<std::uint64_t>(checked_integer(values, "ffn", 0, kShapeLimit));
  shape.seq = static_cast<std::uint64_t>(checked_integer(values, "seq", 1, kShapeLimit));
  shape.batch = static_cast<std::uint64_t>(checked_integer(values, "batch", 1, kShapeLimit));
  shape.tp = static_cast<std::uint64_t>(checked_integer(values, "tp", 1, kShapeLimit));
  shape.sequence_parallel = values.count("sequence-parallel") > 0;
  shape.dropout = values.count("no-dropout") == 0;
  shape.causal_skip = values.count("causal-skip") > 0;
  // The analytic model assumes what current stacks run; the GPU workload's kernel is unfused.
  shape.attention = values.count("analytic") ? profiler::Attention::flash
                                             : profiler::Attention::unfused;
  if (values.count("attention")) {
    const std::string attention = checked_choice(values, "attention", {"flash", "unfused"});
    shape.attention =
        attention == "flash" ? profiler::Attention::flash : profiler::Attention::unfused;
  }
  profiler::validate(shape);
  return shape;
}

profiler::DeviceThroughput device_from(const po::variables_map &values) {
  profiler::DeviceThroughput device = profiler::device_preset(values["device"].as<std::string>());
  if (values.count("peak-tflops")) {
    device.peak_tflops = values["peak-tflops"].as<double>();
    device.name = "custom";
  }
  if (values.count("efficiency"))
    device.efficiency = values["efficiency"].as<double>();
  if (!(device.peak_tflops > 0) || !std::isfinite(device.peak_tflops))
    throw Error("", 0, "--peak-tflops", "expected a positive finite number");
  if (!(device.peak_tflops >= kMinPeakTflops) || device.peak_tflops > kMaxPeakTflops) {
    throw Error("", 0, "--peak-tflops",
                fmt::format("expected {} to {} TFLOP/s, got {}", kMinPeakTflops, kMaxPeakTflops,
                            device.peak_tflops));
  }
  if (!(device.efficiency > 0) || device.efficiency > 1) {
    throw Error("", 0, "--efficiency", "expected a number in (0, 1]");
  }
  if (device.efficiency < kMinEfficiency) {
    throw Error(
        "", 0, "--efficiency",
        fmt::format("expected {} to 1, got {}: a layer's time would leave the range of a cost file",
                    kMinEfficiency, device.efficiency));
  }
  return device;
}

void check_measurement_options(const po::variables_map &values) {
  if (values["reps"].as<int>() <= 0)
    throw Error("", 0, "reps", "expected a positive number");
  if (values["warmup"].as<int>() < 0)
    throw Error("", 0, "warmup", "expected a non-negative number");
  if (values["microbatches"].as<int>() <= 0) {
    throw Error("", 0, "microbatches", "expected a positive number");
  }
  // Checked before the driver probe, so that a misspelt value fails first on any machine.
  (void)profiler::parse_phase_timer(values["timer"].as<std::string>());
  (void)profiler::parse_run_mode(values["mode"].as<std::string>());
}

bool json_format(const po::variables_map &values) {
  if (values.count("format")) {
    const std::string format = values["format"].as<std::string>();
    if (format != "csv" && format != "json") {
      throw Error("", 0, "format", fmt::format("expected csv or json, got \"{}\"",
                                               cut_for_message(format)));
    }
    return format == "json";
  }
  if (!values.count("output"))
    return false;
  const std::string path = values["output"].as<std::string>();
  return path.size() >= 5 && path.substr(path.size() - 5) == ".json";
}

int write_output(const po::variables_map &values, const CostFile &file, bool json,
                 std::ostream &out, const char *kind) {
  const std::string text = json ? write_cost_json(file) : write_cost_csv(file);
  if (values.count("output")) {
    const std::string path = values["output"].as<std::string>();
    write_file_atomically(path, text);
    // Written to standard output (or a pipe): the cost file is the whole output.
    if (!is_stream_output(path))
      out << fmt::format("ppsim: wrote {} {} layer rows to {}\n", file.rows.size(), kind, path);
  } else {
    out << text;
  }
  return kOk;
}

// `ppsim profile import TRACE`: a PyTorch profiler trace (.json) or an Nsight Systems NVTX GPU
// projection summary (.csv) into a cost file.
int run_import(const Args &args, std::ostream &out, std::ostream &err) {
  po::options_description options("ppsim profile import TRACE [--warmup N] [-o FILE]");
  options.add_options()(
      "trace", po::value<std::string>()->value_name("TRACE"),
      "PyTorch profiler trace (.json), or nsys stats -r nvtx_gpu_proj_trace (or _sum) CSV (.csv)")(
      "warmup", po::value<int>()->default_value(0),
      "iterations of each range to drop (PyTorch traces, nsys traces)")(
      "batch", po::value<std::int64_t>()->value_name("B"),
      "the microbatch size the traced run used, recorded in the JSON file (metadata b) so that "
      "files at several sizes can be read at another")(
      "links", po::value<std::string>()->value_name("FILE"),
      "write the NCCL kernels (collective, link, bytes, ms) of a PyTorch trace as CSV");
  options.add(output_options());
  po::positional_options_description positional;
  positional.add("trace", 1);
  const po::variables_map values = parse_command(args, options, positional);
  if (values.count("help")) {
    out << options << "\n"
        << "Phases are ranges named layer/pass/microbatch (\"L03.F.mb0\" or \"3/F/0\"); passes F, "
           "B, W, BW,\n"
        << "R, RS. A PyTorch trace recorded with record_shapes=True has its BW ranges split into B "
           "and W.\n";
    return kOk;
  }
  if (!values.count("trace"))
    throw Error("", 0, "TRACE", "give a PyTorch profiler trace (.json) or an nsys CSV");
  const int warmup = values["warmup"].as<int>();
  if (warmup < 0)
    throw Error("", 0, "--warmup", "expected a non-negative number");
  const bool json = json_format(values);
  const std::int64_t batch =
      values.count("batch") ? checked_integer(values, "batch", 1, kShapeLimit) : 0;
  if (batch > 0 && !json)
    throw Error("", 0, "--batch",
                "a CSV cost file has no metadata to record the microbatch size in: write JSON "
                "(-o FILE.json or --format json)");
  const std::string path = values["trace"].as<std::string>();
  check_outputs(given_outputs(values, {"output", "links"}), {path});
  const std::string text = read_text_file(path, "trace");
  CostFile file;
  if (path.ends_with(".csv")) {
    if (values.count("links")) // an nsys projection has no send/recv kernels to fit
      throw Error("", 0, "--links",
                  "the send/recv kernels come from a PyTorch profiler trace (JSON), not an nsys "
                  "projection CSV");
    const profiler::NsysImport import = profiler::parse_nsys_projection_csv(text, path);
    if (!import.per_instance && warmup > 0) {
      throw Error("", 0, "--warmup",
                  "an nsys summary pools every iteration: export `nsys stats -r "
                  "nvtx_gpu_proj_trace` (one row per "
                  "range) to drop warm-up iterations");
    }
    if (import.per_instance ? import.instances.empty() : import.ranges.empty())
      throw Error(path, 0, "", "no range named like L03.F.mb0 or 3/F/0 (layer/pass/microbatch)");
    file = profiler::injected_cost_file(import.per_instance
                                            ? profiler::summarize_passes(import.instances, warmup)
                                            : profiler::nsys_pass_summaries(import),
                                        "nsys_import");
    file.metadata.warnings.insert(file.metadata.warnings.end(), import.warnings.begin(),
                                  import.warnings.end());
  } else {
    const profiler::KinetoImport import = profiler::parse_kineto_trace(text, path);
    if (import.phases.empty())
      throw Error(path, 0, "",
                  import.cpu_timed ? "no GPU work in the trace and no CPU operator inside any "
                                     "phase range (record with ProfilerActivity.CUDA, or CPU)"
                                   : "no GPU work inside any phase range (record with "
                                     "ProfilerActivity.CUDA)");
    file = profiler::kineto_cost_file(import, warmup);
    const std::string split = fmt::format(
        "{} BW ranges split into B and W{}", import.split_ranges,
        import.ambiguous_ranges > 0 ? fmt::format(", {} left whole", import.ambiguous_ranges) : "");
    const std::string communication_ms =
        format_readable(static_cast<double>(import.communication_ns) / 1e6);
    if (import.cpu_timed)
      err << fmt::format("ppsim: no GPU work in the trace: timed {} CPU operators in layer ranges "
                         "({}), {} communication operators ({} ms, not layer time), {} outside "
                         "every range\n",
                         import.kernels, split, import.communication, communication_ms,
                         import.unattributed);
    else
      err << fmt::format("ppsim: {} kernels: {} in layer ranges ({}), {} NCCL ({} ms, not layer "
                         "time), {} outside every range\n",
                         import.kernels,
                         import.kernels - import.communication - import.unattributed, split,
                         import.communication, communication_ms, import.unattributed);
    // One line for every send/recv kernel pooled (what the scenario's single link model takes),
    // then one per link when the trace has several.
    const auto print_fit = [&err](const std::string &what, const profiler::LinkFit &fit) {
      const std::string latency = format_readable(fit.latency_ms);
      const std::string bandwidth = format_readable(fit.bandwidth_bytes_per_second / 1e9);
      err << fmt::format(
          "ppsim: {} fit over {} send/recv kernels: latency {} ms, bandwidth {} GB/s "
          "(--comm {} --bandwidth {}GB/s)\n",
          what, fit.samples, latency, bandwidth, latency, bandwidth);
    };
    if (const std::optional<profiler::LinkFit> fit =
            profiler::fit_point_to_point(import.communication_kernels))
      print_fit("point-to-point", *fit);
    const std::map<std::string, profiler::LinkFit> links =
        profiler::fit_links(import.communication_kernels);
    if (links.size() > 1)
      for (const auto &[link, fit] : links)
        print_fit("link " + link, fit);
    if (values.count("links")) {
      std::string rows = "collective,link,bytes,ms\n";
      for (const profiler::CommunicationKernel &kernel : import.communication_kernels)
        rows += fmt::format("{},{},{},{}\n", kernel.collective, kernel.link, kernel.bytes,
                            format_readable(static_cast<double>(kernel.duration_ns) / 1e6));
      write_file_atomically(values["links"].as<std::string>(), rows);
    }
  }
  if (file.rows.empty())
    throw Error(path, 0, "",
                fmt::format("every range is a warm-up iteration (--warmup {})", warmup));
  file.metadata.timer = file.rows.front().source;
  file.metadata.warmup = warmup;
  file.metadata.b = batch; // 0: the trace does not say
  file.metadata.dropout = false; // a trace does not say; the measured bytes are what the model kept
  for (const std::string &warning : file.metadata.warnings)
    err << fmt::format("ppsim: warning: {}\n", warning);
  return write_output(values, file, json, out, "imported");
}

// `ppsim profile merge FILES...`: the per-rank files of the injection library into one model.
int run_merge_ranks(const Args &args, std::ostream &out) {
  po::options_description options("ppsim profile merge RANK_FILE... [-o FILE]");
  options.add_options()("files", po::value<std::vector<std::string>>()->value_name("FILE"),
                        "per-rank cost files");
  options.add(output_options());
  po::positional_options_description positional;
  positional.add("files", -1);
  const po::variables_map values = parse_command(args, options, positional);
  if (values.count("help")) {
    out << options << "\n"
        << "Each file holds the layers one rank ran (ppsim_costs.rank3.csv); together they must "
           "hold\n"
        << "every layer from 0 exactly once.\n";
    return kOk;
  }
  if (!values.count("files"))
    throw Error("", 0, "FILE", "give the per-rank cost files");
  const bool json = json_format(values);
  check_outputs(given_outputs(values, {"output"}), values["files"].as<std::vector<std::string>>());
  std::vector<CostFile> files;
  std::optional<std::size_t> first_json;
  for (const std::string &path : values["files"].as<std::vector<std::string>>()) {
    // A rank's file keeps what it did not measure absent (an F + BW script has no B or W column).
    files.push_back(read_cost_file(path, LayerIds::ascending, Required::absent_allowed));
    if (!first_json && path.ends_with(".json"))
      first_json = files.size() - 1;
  }
  CostFile merged = merge_cost_files(files);
  // A CSV file has no metadata: take the first JSON file's, else claim only what the rows say.
  const CostMetadata sums = merged.metadata;
  merged.metadata = first_json ? files[*first_json].metadata : CostMetadata{};
  merged.metadata.warnings = sums.warnings;
  merged.metadata.dropped_records = sums.dropped_records;
  merged.metadata.unattributed_kernel_ms = sums.unattributed_kernel_ms;
  if (!first_json) {
    merged.metadata.timer = merged.rows.front().source;
    for (const CostRow &row : merged.rows)
      if (row.source != merged.metadata.timer)
        merged.metadata.timer = "mixed";
    merged.metadata.dropout = false;
  }
  return write_output(values, merged, json, out, "merged");
}

// `ppsim profile` measuring on the GPU or writing the analytic model.
int measure_or_model(const Args &args, std::ostream &out, std::ostream &err) {
  const po::options_description options = profile_options();
  po::variables_map values;
  po::store(po::command_line_parser(args).options(options).run(), values);
  po::notify(values);
  if (values.count("help")) {
    out << options << "\n";
    return kOk;
  }
  const profiler::BlockShape shape = shape_from(values);
  const profiler::DeviceThroughput device = device_from(values);
  check_measurement_options(values);
  const bool json = json_format(values);
  check_outputs(given_outputs(values, {"output", "events"}), {});
  const int layers = static_cast<int>(checked_integer(values, "layers", 1, kMaxLayers));
  if (values.count("events") &&
      (values.count("analytic") || values["timer"].as<std::string>() != "cupti"))
    throw Error("", 0, "--events", "events are recorded by measuring with the cupti timer");

  if (!values.count("analytic")) {
    // What the GPU workload cannot measure is refused before the probe, on any machine.
    profiler::check_measurable(shape);
    if (values["dtype"].as<std::string>() != "bf16")
      throw Error("", 0, "dtype", "the GPU workload runs bf16; --dtype fp16 is for --analytic");
    if (values["microbatches"].as<int>() != 1)
      throw Error("", 0, "microbatches",
                  "the GPU workload times one microbatch per phase; use --reps for more samples");
    // Options only the analytic model reads: measuring would silently ignore them.
    if (values["vocab"].as<std::int64_t>() != 0)
      throw Error("", 0, "vocab",
                  "the GPU workload measures transformer blocks only; --vocab is for --analytic");
    for (const char *option : {"device", "peak-tflops", "efficiency"})
      if (values.count(option) && !values[option].defaulted())
        throw Error("", 0, option,
                    "measured times need no throughput model; --" + std::string(option) +
                        " is for --analytic");
    // Probe the driver before any CUPTI call: CUPTI itself reports "unknown error" (999) when
    // there is no driver (docs/profiler.md).
    const auto driver = profiler::system_driver(values["driver-library"].as<std::string>());
    const profiler::DriverProbe probe = profiler::probe_driver(*driver);
    if (!probe.ok() && values.count("allow-no-gpu")) {
      err << fmt::format("ppsim: warning: {}; writing the analytic cost model (--allow-no-gpu)\n",
                         probe.problem);
      if (values.count("events"))
        err << fmt::format("ppsim: warning: nothing measured, so no events written to {}\n",
                           values["events"].as<std::string>());
    } else {
      profiler::require_gpu(probe);
      profiler::GpuProfileRequest request;
      request.shape = shape;
      request.layers = layers;
      request.reps = values["reps"].as<int>();
      request.warmup = values["warmup"].as<int>();
      request.mode = profiler::parse_run_mode(values["mode"].as<std::string>());
      request.timer = profiler::parse_phase_timer(values["timer"].as<std::string>());
      if (values.count("cupti-path"))
        request.cupti_path = values["cupti-path"].as<std::string>();
      request.device = device;
      request.keep_events = values.count("events") > 0;
      const std::string module = values.count("gpu-module") ? values["gpu-module"].as<std::string>()
                                                            : profiler::default_gpu_module_path();
      profiler::GpuMeasurement measured = profiler::run_gpu_profile(module, request);
      for (const std::string &warning : measured.costs.metadata.warnings) {
        err << fmt::format("ppsim: warning: {}\n", warning);
      }
      if (values.count("events"))
        write_file_atomically(values["events"].as<std::string>(), measured.events_ndjson);
      return write_output(values, measured.costs, json, out, "measured");
    }
  }

  const auto vocabulary =
      static_cast<std::uint64_t>(checked_integer(values, "vocab", 0, kShapeLimit));
  CostFile file = profiler::analytic_cost_file(shape, layers, device, vocabulary);
  file.metadata.dtype = values["dtype"].as<std::string>();
  file.metadata.mode = values["mode"].as<std::string>();
  return write_output(values, file, json, out, "analytic");
}

} // namespace

int run_profile(const Args &args, std::ostream &out, std::ostream &err) {
  if (!args.empty() && args.front() == "import")
    return run_import(Args(args.begin() + 1, args.end()), out, err);
  if (!args.empty() && args.front() == "merge")
    return run_merge_ranks(Args(args.begin() + 1, args.end()), out);
  try {
    return measure_or_model(args, out, err);
  } catch (const Error &error) {
    // The cost model and the GPU runner name a value by its concept ("heads", "tp"); on this
    // command line it is an option, so the error names it as the user typed it.
    if (!error.file().empty() || error.field().empty() || error.field().starts_with("-") ||
        !profile_options().find_nothrow(error.field(), false))
      throw;
    throw Error("", 0, "--" + error.field(), error.sentence());
  }
}

} // namespace ppsim::cli
