// The `ppsim._ppsim` extension (docs/python.md): the run/ library's calls for Python, the same
// functions the CLI calls. Plain values in and out: a scenario is a RunInput set field by field
// through the scenario files' field table; results are the CLI's JSON reports (parsed by the
// Python package) and the op timeline as NumPy arrays. ppsim's errors become ppsim.Error with
// the one-line message; the GIL is released while ppsim computes.
#include "base/error.h"
#include "base/parallel.h"
#include "bounds/analyzer.h"
#include "run/compare.h"
#include "run/evaluate.h"
#include "run/policy.h"
#include "run/prepare.h"
#include "run/remat_table.h"
#include "run/report_page.h"
#include "run/run_input.h"
#include "run/scenario_file.h"
#include "run/sweep.h"
#include "run/synthesis.h"
#include "sim/critical_path.h"
#include "sim/io/report.h"
#include "sim/io/svg.h"
#include "sim/io/torch_csv.h"
#include "sim/schedules/registry.h"

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace ppsim {
namespace {

// A field set from Python is reported by its name, as a flag is ("field 'cluster.devices': ...").
SourceLocation python_origin(const std::string &key) { return SourceLocation{"", 0, key}; }

// The op timeline of a simulation as columns: one entry per op (an overlapped F&B pair is one
// entry, its forward's stage and microbatch), in device order, times in the scenario's unit.
py::dict timeline(const Evaluation &evaluation) {
  const Scenario &scenario = evaluation.run.scenario;
  const Schedule &schedule = evaluation.run.schedule;
  const Timing &timing = evaluation.simulation.timing;
  const std::size_t count = schedule.op_count();
  py::array_t<std::int32_t> device(static_cast<py::ssize_t>(count));
  py::array_t<std::int32_t> stage(static_cast<py::ssize_t>(count));
  py::array_t<std::int32_t> microbatch(static_cast<py::ssize_t>(count));
  py::array_t<double> start(static_cast<py::ssize_t>(count));
  py::array_t<double> end(static_cast<py::ssize_t>(count));
  py::list kind;
  auto device_at = device.mutable_unchecked<1>();
  auto stage_at = stage.mutable_unchecked<1>();
  auto microbatch_at = microbatch.mutable_unchecked<1>();
  auto start_at = start.mutable_unchecked<1>();
  auto end_at = end.mutable_unchecked<1>();
  py::ssize_t entry = 0;
  for (std::size_t d = 0; d < schedule.device_ops.size(); ++d) {
    for (const Op &op : schedule.device_ops[d]) {
      device_at(entry) = static_cast<std::int32_t>(d);
      stage_at(entry) = op.first.stage;
      microbatch_at(entry) = op.first.microbatch;
      start_at(entry) = scenario.time_scale.to_units(timing.start[at(entry)]);
      end_at(entry) = scenario.time_scale.to_units(timing.end[at(entry)]);
      kind.append(std::string(op_kind_token(op.kind())));
      ++entry;
    }
  }
  py::dict columns;
  columns["device"] = device;
  columns["kind"] = kind;
  columns["stage"] = stage;
  columns["microbatch"] = microbatch;
  columns["start"] = start;
  columns["end"] = end;
  return columns;
}

// One run: its report as the CLI's `simulate --format json` writes it, the timeline, the
// explanation of its bubbles and its Gantt chart.
py::dict simulate_run(const RunInput &input, bool gantt) {
  std::optional<Evaluation> evaluation;
  std::string report, explanation, svg;
  {
    py::gil_scoped_release release;
    evaluation = evaluate_run(input, EvaluateOptions{gantt});
    report = report_json(evaluation->report());
    const PreparedRun &run = evaluation->run;
    explanation = explanation_text(
        run.scenario, run.schedule,
        explain_bubbles(run.scenario, run.schedule, evaluation->simulation.timing));
    if (gantt)
      svg = gantt_svg(run.scenario, run.schedule, evaluation->simulation,
                      GanttOptions{.time_unit = input.time_unit});
  }
  py::dict result;
  result["report"] = report;
  result["ops"] = timeline(*evaluation);
  result["explanation"] = explanation;
  result["svg"] = svg;
  return result;
}

// Thrown by a ranking's progress callback once Ctrl-C was seen: ends rank_runs at its next step.
struct Interrupted {};

// `work(stop)` without the GIL, stoppable with Ctrl-C: Python runs signal handlers on its main
// thread only, so the work runs on a thread of its own while this one checks for a signal every
// 50 ms; on one it sets `stop`, which the work's solvers, searches and progress callbacks read, waits
// for the work to end, and raises KeyboardInterrupt.
template <typename Work>
auto interruptible(const Work &work) -> decltype(work(std::declval<const std::atomic<bool> &>())) {
  std::atomic<bool> stop{false};
  std::optional<decltype(work(stop))> result;
  std::exception_ptr failure;
  std::mutex mutex;
  std::condition_variable ended;
  bool finished = false;
  {
    py::gil_scoped_release release;
    std::thread worker([&] {
      try {
        result = work(stop);
      } catch (...) {
        failure = std::current_exception();
      }
      const std::lock_guard lock(mutex);
      finished = true;
      ended.notify_one();
    });
    // A short call returns at once; a long one is looked at every 50 ms.
    std::unique_lock lock(mutex);
    while (!ended.wait_for(lock, std::chrono::milliseconds(50), [&] { return finished; })) {
      if (stop)
        continue;
      lock.unlock();
      {
        const py::gil_scoped_acquire acquire;
        if (PyErr_CheckSignals() != 0) {
          PyErr_Clear(); // raised again below, once the work has stopped
          stop = true;
        }
      }
      lock.lock();
    }
    lock.unlock();
    worker.join();
  }
  if (stop) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  if (failure)
    std::rethrow_exception(failure);
  return std::move(*result);
}

// rank_runs, stopped by Ctrl-C after the run in progress (an ILP solve ends first, within
// remat.time_limit).
std::vector<Ranking> interruptible_ranking(const RankRequest &request) {
  return interruptible([&](const std::atomic<bool> &stop) {
    return rank_runs(request, [&](std::size_t, std::size_t, std::string_view) {
      if (stop)
        throw Interrupted{};
    });
  });
}

RankRequest ranking_request(const RunInput &input, const std::vector<std::string> &schedules,
                            const std::vector<std::optional<double>> &caps, unsigned threads) {
  RankRequest request = rank_request(input, schedules, caps);
  request.threads = std::max(1U, threads);
  return request;
}

// The ranking of `compare`, as `compare --format json` prints it (run/compare.h); over the
// microbatch sizes at the input's batch when `microbatch_sizes` is not empty.
std::string compare_runs(const RunInput &input, const std::vector<std::string> &schedules,
                         const std::vector<std::optional<double>> &caps, unsigned threads,
                         const std::vector<int> &microbatch_sizes) {
  RankRequest request = ranking_request(input, schedules, caps, threads);
  request.microbatch_sizes = microbatch_sizes; // rank_runs refuses what it cannot rank first
  request.sizes_origin = {"", 0, "microbatch_sizes"};
  return rankings_json(interruptible_ranking(request));
}

// The interactive page of `ppsim report` (docs/report.md) for the same ranking as compare_runs.
std::string report_of(const RunInput &input, const std::vector<std::string> &schedules,
                      const std::vector<std::optional<double>> &caps, unsigned threads) {
  RankRequest request = ranking_request(input, schedules, caps, threads);
  request.evaluate.timelines = true; // the page's memory curves
  return rankings_page(input, interruptible_ranking(request));
}

// `ppsim remat --format json` for the scenario's schedule and cap (run/remat_table.h); the
// scenario's remat.time_limit and remat.gap unless given.
std::string remat_run(const RunInput &input, std::optional<double> time_limit,
                      std::optional<double> gap) {
  const auto started = std::chrono::steady_clock::now();
  IlpOptions ilp = ilp_options(input);
  ilp.time_limit_seconds = time_limit.value_or(ilp.time_limit_seconds);
  ilp.relative_gap = gap.value_or(ilp.relative_gap);
  if (!(ilp.time_limit_seconds > 0))
    throw Error("", 0, "time_limit", "expected a positive number of seconds");
  if (!(ilp.relative_gap >= 0))
    throw Error("", 0, "gap", "expected a non-negative gap");
  return interruptible([&](const std::atomic<bool> &stop) {
    IlpOptions stoppable = ilp;
    stoppable.stop = &stop;
    return remat_table_json(remat_table(input, stoppable, started));
  });
}

// The lower bounds of `ppsim bounds` (docs/bounds.md), in the scenario's time unit.
py::dict bounds_of(const RunInput &input) {
  BoundsReport report;
  Scenario scenario;
  {
    py::gil_scoped_release release;
    const PreparedRun run = prepare_for_bounds(input);
    report = bounds_for_run(run);
    scenario = run.scenario;
  }
  const auto time = [&](Ticks ticks) { return scenario.time_scale.to_units(ticks); };
  py::dict named;
  for (const NamedBound &bound : report.lower_bounds)
    named[py::str(bound.name)] = time(bound.value);
  py::dict result;
  result["lower_bounds"] = named;
  result["best_lower_bound"] = time(report.best_lower_bound);
  result["closed_form"] = report.closed_form ? py::cast(time(*report.closed_form)) : py::none();
  result["backward"] = report.backward == BackwardForm::split ? "split" : "full";
  return result;
}

// `ppsim synthesize --format json` and the schedule found as PyTorch's CSV.
py::dict synthesize_run(const RunInput &input, double time_limit_seconds,
                        std::int64_t max_evaluations, std::uint64_t seed) {
  if (!(time_limit_seconds > 0))
    throw Error("", 0, "time_limit", "expected a positive number of seconds");
  if (max_evaluations < 0)
    throw Error("", 0, "max_evaluations", "expected a count >= 0");
  const auto [json, files] = interruptible([&](const std::atomic<bool> &stop) {
    SynthesisOptions options;
    options.time_limit_seconds = time_limit_seconds;
    options.max_evaluations = max_evaluations;
    options.seed = seed;
    options.stop = &stop;
    const std::vector<SearchedForm> searched = synthesize_input(input, options);
    const PreparedRun &run = searched.front().run;
    const SynthesisResult &result = searched.front().result;
    const Simulation simulation = simulate(run.scenario, result.schedule);
    const SimulationReport report{run.scenario, result.schedule, simulation, result.lower_bound,
                                  run.warnings};
    return std::pair{synthesis_json(searched, report_json(report)),
                     synthesis_files(run.scenario, result.schedule)};
  });
  py::dict result;
  result["report"] = json;
  result["torch_csv"] = files.torch_csv;
  result["plan_csv"] = files.plan_csv;
  return result;
}

// The points a sweep from Python may have: its rows are held in memory (the command streams
// them and shards bigger sweeps).
constexpr std::size_t kMaxPythonSweepPoints = std::size_t{1} << 24;

// A sweep file's rows, as `ppsim sweep FILE` writes them: the header's columns and one CSV row
// per point. The points run on `threads` threads without the GIL, a batch at a time; between
// batches `progress(done, total)` is called and a pending signal (Ctrl-C) stops the sweep.
py::tuple sweep_rows(const std::string &path, unsigned threads, const py::object &progress) {
  std::optional<Sweep> sweep;
  {
    py::gil_scoped_release release;
    sweep = read_sweep_file(path);
  }
  const std::size_t total = sweep->size();
  if (total > kMaxPythonSweepPoints)
    throw Error(path, 0, "",
                fmt::format("{} points: from Python a sweep holds at most 2^24 in memory; run "
                            "`ppsim sweep` (with --shard) instead",
                            total));
  threads = std::max(1U, threads);
  std::vector<std::string> rows(total);
  const std::size_t batch = std::size_t{4} * threads;
  for (std::size_t first = 0; first < total; first += batch) {
    const std::size_t count = std::min(batch, total - first);
    {
      py::gil_scoped_release release;
      for_each_index(count, threads, [&](std::size_t i) {
        rows[first + i] = run_sweep_point(*sweep, sweep->point(first + i));
      });
    }
    if (PyErr_CheckSignals() != 0)
      throw py::error_already_set();
    if (!progress.is_none())
      progress(first + count, total);
  }
  return py::make_tuple(sweep_columns(*sweep), rows);
}

} // namespace
} // namespace ppsim

PYBIND11_MODULE(_ppsim, module) {
  using namespace ppsim;
  module.doc() = "ppsim's run/ library (docs/python.md); use the `ppsim` package.";
  static py::exception<Error> error(module, "Error", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr raised) {
    try {
      if (raised)
        std::rethrow_exception(raised);
    } catch (const Error &e) {
      py::set_error(error, e.what());
    }
  });

  py::class_<RunInput>(module, "RunInput")
      .def(py::init<>())
      .def("set",
           [](RunInput &input, const std::string &key, const std::string &text) {
             set_scenario_field_from_text(input, key, text, python_origin(key));
           })
      .def_property_readonly("devices", [](const RunInput &i) { return i.devices; })
      .def_property_readonly("microbatches", [](const RunInput &i) { return i.microbatches; })
      .def_property_readonly("schedule", [](const RunInput &i) { return i.schedule; })
      .def_property_readonly("model_name", [](const RunInput &i) { return i.model_name; })
      .def_property_readonly("time_unit", [](const RunInput &i) { return i.time_unit; })
      .def("copy", [](const RunInput &i) { return RunInput(i); });

  module.def("read_scenario", &read_scenario_file, py::arg("path"));
  module.def("parse_scenario", &parse_scenario, py::arg("text"), py::arg("source"),
             py::arg("base_directory") = "");
  module.def("field_names", &scenario_field_names);
  module.def("schedules", [] {
    py::list entries;
    for (const ScheduleInfo &info : schedule_registry()) {
      py::dict entry;
      entry["name"] = info.name;
      entry["description"] = info.description;
      entry["chunks"] = info.default_chunks;
      entry["split_backward"] = info.split_backward;
      entry["pipes"] = info.pipes();
      entries.append(entry);
    }
    return entries;
  });
  module.def("simulate", &simulate_run, py::arg("input"), py::arg("gantt") = false);
  module.def("compare", &compare_runs, py::arg("input"), py::arg("schedules"), py::arg("caps"),
             py::arg("threads"), py::arg("microbatch_sizes"));
  module.def("bounds", &bounds_of, py::arg("input"));
  module.def("report", &report_of, py::arg("input"), py::arg("schedules"), py::arg("caps"),
             py::arg("threads"));
  module.def("remat", &remat_run, py::arg("input"), py::arg("time_limit"), py::arg("gap"));
  module.def("synthesize", &synthesize_run, py::arg("input"), py::arg("time_limit"),
             py::arg("max_evaluations"), py::arg("seed"));
  module.def("sweep", &sweep_rows, py::arg("path"), py::arg("threads"), py::arg("progress"));
  module.def(
      "to_torch_csv",
      [](const RunInput &input) {
        py::gil_scoped_release release;
        const PreparedRun run = prepare_run(input);
        return write_torch_csv(run.scenario, run.schedule).text;
      },
      py::arg("input"));
}
