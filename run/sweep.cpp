#include "run/sweep.h"
#include "base/index.h"

#include "base/error.h"
#include "base/text_file.h"
#include "run/compare.h"
#include "run/evaluate.h"
#include "run/policy.h"
#include "run/scenario_file.h"
#include "run/toml_fields.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <utility>

namespace ppsim {
namespace {

// A recomputation policy that reads a plan file: "file:PATH".
constexpr std::string_view kPlanPrefix = "file:";

// Where a key was declared, for the declaration order of axes (toml++ tables are sorted maps).
struct Declared {
  SweepColumn column;
  std::pair<int, int> position; // line, column of the key
};

[[noreturn]] void fail_at(const std::string &source, const toml::source_region &region,
                          const std::string &sentence) {
  throw Error(source, static_cast<int>(region.begin.line), "", sentence);
}

// Value text as it appears in the CSV and in the id: strings bare, floats in their shortest
// round-trip form (0.1, not TOML's 0.10000000000000001), other values as TOML prints them.
std::string value_text(const toml::node &node) {
  if (const auto text = node.value_exact<std::string>())
    return *text;
  if (const auto number = node.value_exact<double>())
    return fmt::format("{}", *number);
  std::ostringstream out;
  node.visit([&out](const auto &value) { out << value; });
  return out.str();
}

// Flattens a table of axes (quoted "a.b" keys or dotted a.b keys) into columns.
void collect_columns(const toml::table &table, const std::string &prefix, const std::string &source,
                     std::vector<Declared> &columns) {
  for (const auto &[key, node] : table) {
    const std::string dotted =
        prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const toml::table *child = node.as_table()) {
      collect_columns(*child, dotted, source, columns);
      continue;
    }
    const auto &names = scenario_field_names();
    if (std::find(names.begin(), names.end(), dotted) == names.end()) {
      fail_at(source, key.source(), unknown_name("field", dotted, names));
    }
    const toml::array *values = node.as_array();
    if (values == nullptr || values->empty()) {
      throw Error(source, static_cast<int>(key.source().begin.line), dotted,
                  "expected a non-empty list of values");
    }
    columns.push_back(Declared{
        SweepColumn{dotted, *values, source, static_cast<int>(key.source().begin.line)},
        {static_cast<int>(key.source().begin.line), static_cast<int>(key.source().begin.column)}});
  }
}

// Sorts columns into declaration order and checks that every field is swept once.
SweepAxis make_axis(std::vector<Declared> declared, const std::string &source) {
  std::sort(declared.begin(), declared.end(),
            [](const Declared &a, const Declared &b) { return a.position < b.position; });
  SweepAxis axis;
  for (Declared &entry : declared) {
    if (!axis.columns.empty() && entry.column.values.size() != axis.size()) {
      throw Error(
          source, entry.column.line, entry.column.key,
          fmt::format(
              "has {} values but '{}' has {}: axes that advance together need equal lengths",
              entry.column.values.size(), axis.columns.front().key, axis.size()));
    }
    axis.columns.push_back(std::move(entry.column));
  }
  // Equal value tuples would give two runs the same id.
  std::set<std::vector<std::string>> seen;
  for (std::size_t i = 0; i < axis.size(); ++i) {
    std::vector<std::string> tuple;
    for (const SweepColumn &column : axis.columns)
      tuple.push_back(value_text(*column.values.get(i)));
    if (!seen.insert(tuple).second) {
      const SweepColumn &first = axis.columns.front();
      throw Error(source, first.line, first.key,
                  fmt::format("value {} is listed twice", fmt::join(tuple, ", ")));
    }
  }
  return axis;
}

std::pair<int, int>
axis_position(const SweepAxis &axis,
              const std::vector<std::pair<std::string, std::pair<int, int>>> &positions) {
  for (const auto &[key, position] : positions) {
    if (key == axis.columns.front().key)
      return position;
  }
  return {0, 0};
}

std::uint64_t fnv1a(std::string_view text, std::uint64_t hash) {
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// A list of names in [rank]; each checked by `check` (an Error sentence, or nothing).
std::vector<std::string> rank_names(const toml::table &table, const char *key,
                                    const std::string &source,
                                    const std::function<void(const std::string &)> &check) {
  std::vector<std::string> names;
  const toml::node *node = table.get(key);
  if (node == nullptr)
    return names;
  const std::string field = fmt::format("rank.{}", key);
  const toml::array *list = node->as_array();
  if (list == nullptr || list->empty()) {
    throw Error(source, static_cast<int>(node->source().begin.line), field,
                "expected a non-empty list of names");
  }
  for (const toml::node &item : *list) {
    const auto name = item.value_exact<std::string>();
    const int line = static_cast<int>(item.source().begin.line);
    if (!name)
      throw Error(source, line, field, fmt::format("expected a name, got {}", value_text(item)));
    try {
      check(*name);
    } catch (const Error &error) {
      throw Error(source, line, field, error.sentence());
    }
    names.push_back(*name);
  }
  return names;
}

SweepRank read_rank(const toml::node &node, const std::string &source, int line) {
  const toml::table *table = node.as_table();
  if (table == nullptr)
    throw Error(source, line, "rank", "expected a table: [rank] schedules = [...], policies = [...]");
  for (const auto &[key, value] : *table) {
    if (key.str() != "schedules" && key.str() != "policies") {
      throw Error(source, static_cast<int>(key.source().begin.line), "rank",
                  fmt::format("unknown key '{}' (expected schedules or policies)", key.str()));
    }
  }
  SweepRank rank;
  rank.schedules = rank_names(*table, "schedules", source,
                              [](const std::string &name) { find_schedule(name); });
  rank.policies = rank_names(*table, "policies", source, [](const std::string &name) {
    check_policy_name(name);
  });
  return rank;
}

} // namespace

std::size_t Sweep::size() const {
  std::size_t count = 1;
  for (const SweepAxis &axis : axes)
    count *= axis.size();
  return count;
}

std::vector<std::string> Sweep::parameter_names() const {
  std::vector<std::string> names;
  for (const SweepAxis &axis : axes) {
    for (const SweepColumn &column : axis.columns)
      names.push_back(column.key);
  }
  return names;
}

SweepPoint Sweep::point(std::size_t index) const {
  SweepPoint point;
  point.index = index;
  point.input = base;
  // Mixed radix, the last axis fastest: the lexicographic order of declaration.
  std::vector<std::size_t> choice(axes.size());
  std::size_t rest = index;
  for (std::size_t a = axes.size(); a-- > 0;) {
    choice[a] = rest % axes[a].size();
    rest /= axes[a].size();
  }
  std::uint64_t hash = fnv1a("ppsim " PPSIM_PROJECT_VERSION "\n", 0xcbf29ce484222325ULL);
  if (rank) {
    // A row is the winner of what was ranked: other schedules or policies give another row.
    hash = fnv1a(fmt::format("rank.schedules={}\nrank.policies={}\n",
                             fmt::join(rank->schedules, ","), fmt::join(rank->policies, ",")),
                 hash);
  }
  for (std::size_t a = 0; a < axes.size(); ++a) {
    for (const SweepColumn &column : axes[a].columns) {
      point.values.push_back(value_text(*column.values.get(choice[a])));
      hash = fnv1a(fmt::format("{}={}\n", column.key, point.values.back()), hash);
    }
  }
  try {
    for (std::size_t a = 0; a < axes.size(); ++a) {
      for (const SweepColumn &column : axes[a].columns) {
        set_scenario_field(point.input, column.key, *column.values.get(choice[a]),
                           SourceLocation{column.source, column.line, column.key});
      }
    }
  } catch (const Error &error) {
    point.error = error.what();
  }
  for (std::string &file : point.input.costs_files)
    file = resolve_path(file, base_directory);
  point.input.schedule_file = resolve_path(point.input.schedule_file, base_directory);
  // The files a run reads, so that resuming after one of them changed runs it again.
  std::vector<std::string> files{base_file, point.input.schedule_file};
  files.insert(files.end(), point.input.costs_files.begin(), point.input.costs_files.end());
  std::vector<std::string> policies{point.input.remat_policy};
  if (rank)
    policies.insert(policies.end(), rank->policies.begin(), rank->policies.end());
  for (const std::string &policy : policies) {
    if (policy.starts_with(kPlanPrefix))
      files.push_back(policy.substr(kPlanPrefix.size()));
  }
  // By its place in the list, not its path: the same sweep named from another folder (a
  // cluster task's absolute path) keeps its ids.
  for (std::size_t k = 0; k < files.size(); ++k) {
    if (!files[k].empty())
      hash = fnv1a(fmt::format("file {}={:016x}\n", k, digests->of(files[k])), hash);
  }
  point.id = fmt::format("{:016x}", hash);
  return point;
}

namespace {

// The ranking of one point, as `compare` ranks its scenario (one thread: a sweep runs its points
// in parallel, and the ranking does not depend on the thread count); its row is the winner.
std::string ranked_point_row(const Sweep &sweep, const SweepPoint &point) {
  RankRequest request = rank_request(point.input, sweep.rank->schedules);
  if (!sweep.rank->policies.empty())
    request.policies = sweep.rank->policies;
  request.threads = 1;
  const Ranking ranking = rank_runs(request, nullptr).front();
  const RankedRun *winner = ranking.winner();
  if (winner == nullptr) {
    SweepPoint none = point;
    none.input.schedule.clear();
    none.input.remat_policy.clear();
    return sweep_row(sweep, none, nullptr,
                     fmt::format("no run fits {}", cap_label(point.input, ranking.cap)));
  }
  SweepPoint won = point;
  won.input.schedule = winner->schedule;
  won.input.remat_policy = winner->policy;
  const SimulationReport report = winner->evaluation->report();
  return sweep_row(sweep, won, &report, "");
}

} // namespace

std::string run_sweep_point(const Sweep &sweep, const SweepPoint &point) {
  if (!point.error.empty())
    return sweep_row(sweep, point, nullptr, point.error);
  try {
    if (sweep.rank)
      return ranked_point_row(sweep, point);
    const Evaluation evaluation = evaluate_run(point.input);
    const SimulationReport report = evaluation.report();
    return sweep_row(sweep, point, &report, "");
  } catch (const Error &error) {
    return sweep_row(sweep, point, nullptr, error.what());
  }
}

std::uint64_t FileDigests::of(const std::string &path) {
  const std::lock_guard lock(mutex_);
  const auto known = digests_.find(path);
  if (known != digests_.end())
    return known->second;
  std::uint64_t digest = 0;
  try {
    digest = fnv1a(read_text_file(path, "file"), 0xcbf29ce484222325ULL);
  } catch (const Error &) {
    // Left to the run, which names the file in its error.
  }
  return digests_[path] = digest;
}

Sweep parse_sweep(std::string_view text, const std::string &source,
                  const std::string &base_directory, const ScenarioLoader &load_scenario) {
  const toml::table parsed = parse_toml(text, source);
  Sweep sweep;
  sweep.base_directory = base_directory;
  bool zip_mode = false;
  std::vector<Declared> axis_columns;
  std::vector<std::vector<Declared>> zip_groups;
  for (const auto &[key, node] : parsed) {
    const std::string name(key.str());
    const int line = static_cast<int>(key.source().begin.line);
    if (name == "base") {
      const auto path = node.value_exact<std::string>();
      if (!path)
        throw Error(source, line, name, "expected the path of a scenario file");
      sweep.base_file = resolve_path(*path, base_directory);
      sweep.base = load_scenario(sweep.base_file);
    } else if (name == "mode") {
      const auto mode = node.value_exact<std::string>();
      if (!mode || (*mode != "product" && *mode != "zip")) {
        throw Error(source, line, name, "expected \"product\" or \"zip\"");
      }
      zip_mode = *mode == "zip";
    } else if (name == "axes") {
      if (!node.is_table())
        throw Error(source, line, name, "expected a table of lists");
      collect_columns(*node.as_table(), "", source, axis_columns);
    } else if (name == "zip") {
      const toml::array *groups = node.as_array();
      if (groups == nullptr || !groups->is_array_of_tables()) {
        throw Error(source, line, name, "expected [[zip]] tables");
      }
      for (const toml::node &group : *groups) {
        zip_groups.emplace_back();
        collect_columns(*group.as_table(), "", source, zip_groups.back());
        if (zip_groups.back().empty())
          fail_at(source, group.source(), "a [[zip]] group needs at least one field");
      }
    } else if (name == "output") {
      const toml::node *metrics = node.is_table() ? node.as_table()->get("metrics") : nullptr;
      const toml::array *list = metrics != nullptr ? metrics->as_array() : nullptr;
      if (list == nullptr || node.as_table()->size() != 1) {
        throw Error(source, line, name, "expected one key, metrics = [\"makespan\", ...]");
      }
      const std::vector<std::string> known = sweep_metric_names();
      for (const toml::node &metric : *list) {
        const auto metric_name = metric.value_exact<std::string>();
        if (!metric_name || std::find(known.begin(), known.end(), *metric_name) == known.end()) {
          const std::string shown = metric_name ? *metric_name : value_text(metric);
          throw Error(source, static_cast<int>(metric.source().begin.line), "output.metrics",
                      unknown_name("metric", shown, known));
        }
        sweep.metrics.push_back(*metric_name);
      }
    } else if (name == "rank") {
      sweep.rank = read_rank(node, source, line);
      // Plan files are read where the sweep file is, as a swept remat.policy's are.
      for (std::string &policy : sweep.rank->policies) {
        if (policy.starts_with(kPlanPrefix))
          policy = std::string(kPlanPrefix) +
                   resolve_path(policy.substr(kPlanPrefix.size()), base_directory);
      }
    } else {
      throw Error(source, line, "",
                  fmt::format("unknown sweep key '{}' (expected base, mode, axes, zip, output or "
                              "rank)",
                              name));
    }
  }

  std::vector<std::pair<std::string, std::pair<int, int>>> positions;
  for (const Declared &entry : axis_columns)
    positions.emplace_back(entry.column.key, entry.position);
  for (const auto &group : zip_groups) {
    for (const Declared &entry : group)
      positions.emplace_back(entry.column.key, entry.position);
  }
  std::set<std::string> swept;
  for (const auto &[field, position] : positions) {
    if (!swept.insert(field).second) {
      throw Error(source, position.first, field, "is swept twice");
    }
    if (sweep.rank && (field == "pipeline.schedule" || field == "pipeline.schedule_file" ||
                       field == "remat.policy")) {
      throw Error(source, position.first, field,
                  "is chosen by [rank] at every point: list the candidates in rank.schedules or "
                  "rank.policies instead");
    }
  }
  if (zip_mode && !axis_columns.empty()) {
    sweep.axes.push_back(make_axis(std::move(axis_columns), source));
  } else {
    for (Declared &entry : axis_columns)
      sweep.axes.push_back(make_axis({std::move(entry)}, source));
  }
  for (auto &group : zip_groups)
    sweep.axes.push_back(make_axis(std::move(group), source));
  std::stable_sort(sweep.axes.begin(), sweep.axes.end(),
                   [&positions](const SweepAxis &a, const SweepAxis &b) {
                     return axis_position(a, positions) < axis_position(b, positions);
                   });
  // The grid's points are numbered in 64 bits (sharding, resume): a product past the limit would
  // wrap. No sweep that size could run anyway.
  __extension__ using Int128 = __int128;
  Int128 points = 1;
  for (const SweepAxis &axis : sweep.axes) {
    points *= static_cast<Int128>(axis.size());
    if (points > kMaxSweepPoints) {
      throw Error(
          source, 0, "",
          fmt::format(
              "the axes make more than {} points (the product of their lengths); split the sweep",
              kMaxSweepPoints));
    }
  }
  return sweep;
}

Sweep read_sweep_file(const std::string &path) {
  Sweep sweep = parse_sweep(read_text_file(path, "sweep file"), path, parent_directory(path),
                            read_scenario_file);
  // Every point shares the base's costs unless an axis swaps the files or the size they are
  // read at: read once, and a missing file is one error before the first point rather than an
  // error on every row.
  const auto swaps_costs = [](const SweepColumn &c) {
    return c.key == "model.costs_file" || c.key == "pipeline.microbatch_size";
  };
  const bool swept_costs =
      std::any_of(sweep.axes.begin(), sweep.axes.end(), [&](const SweepAxis &axis) {
        return std::any_of(axis.columns.begin(), axis.columns.end(), swaps_costs);
      });
  if (!swept_costs)
    load_cost_file(sweep.base);
  return sweep;
}

std::vector<std::string> sweep_metric_names() {
  std::vector<std::string> names = report_csv_columns();
  names.erase(names.begin(), std::find(names.begin(), names.end(), "feasible") + 1);
  names.insert(names.end(), {"recompute_time", "device_bubble", "iteration", "throughput"});
  return names;
}

namespace {

// Whether some point of the sweep has an iteration's end (in its base or on an axis): the
// default columns hold `iteration` and `throughput` only then.
bool ends_iterations(const Sweep &sweep) {
  const std::vector<std::string> parameters = sweep.parameter_names();
  return sweep.base.iteration_end != IterationEnd::none ||
         std::find(parameters.begin(), parameters.end(), "iteration.end") != parameters.end();
}

} // namespace

std::vector<std::string> sweep_columns(const Sweep &sweep) {
  std::vector<std::string> columns{"run", "run_id", "points"};
  for (const std::string &name : sweep.parameter_names())
    columns.push_back(name);
  for (const char *name : {"schedule", "p", "m", "v", "remat_policy", "feasible"})
    columns.emplace_back(name);
  std::vector<std::string> metrics = sweep.metrics;
  if (metrics.empty()) {
    metrics = sweep_metric_names();
    if (!ends_iterations(sweep))
      metrics.resize(metrics.size() - 2); // iteration, throughput
  }
  columns.insert(columns.end(), metrics.begin(), metrics.end());
  columns.emplace_back("error");
  return columns;
}

std::string sweep_row(const Sweep &sweep, const SweepPoint &point, const SimulationReport *report,
                      const std::string &error) {
  // Every value by column name; columns not filled stay empty.
  std::map<std::string, std::string> cells;
  cells["schedule"] =
      point.input.schedule_file.empty() ? point.input.schedule : point.input.schedule_file;
  cells["p"] = fmt::format("{}", point.input.devices);
  cells["m"] = fmt::format("{}", point.input.microbatches);
  cells["v"] = point.input.chunks > 0 ? fmt::format("{}", point.input.chunks) : "";
  cells["remat_policy"] = point.input.remat_policy;
  cells["feasible"] = "false";
  cells["error"] = error;
  if (report != nullptr) {
    const std::vector<std::string> names = report_csv_columns();
    const std::vector<std::string> values = report_csv_values(*report);
    for (std::size_t i = 0; i < names.size(); ++i)
      cells[names[i]] = values[i];
    // device_bubble: the DualPipe README's per-device bubble, max over devices of makespan - busy.
    const Metrics &metrics = report->simulation.metrics;
    Ticks recompute{0};
    Ticks device_bubble{0};
    for (const DeviceMetrics &device : metrics.devices) {
      recompute = recompute + device.recompute;
      device_bubble = std::max(device_bubble, metrics.makespan - device.busy);
    }
    cells["recompute_time"] = report->scenario.time_scale.format(recompute);
    cells["device_bubble"] = report->scenario.time_scale.format(device_bubble);
    if (metrics.iteration) {
      cells["iteration"] = report->scenario.time_scale.format(*metrics.iteration);
      cells["throughput"] = fmt::format("{}", throughput(report->scenario, *metrics.iteration));
    }
    if (!report->simulation.metrics.violations.empty() && error.empty()) {
      const Violation &first = report->simulation.metrics.violations.front();
      cells["error"] = fmt::format("device {} exceeds the memory cap: {:.6g} > {:.6g}",
                                   first.device, first.resident, first.cap);
    }
  }
  // Every row carries the sweep's point count, so that merge can tell a missing last shard.
  std::vector<std::string> row{fmt::format("{}", point.index), point.id,
                               fmt::format("{}", sweep.size())};
  for (const std::string &value : point.values)
    row.push_back(csv_field(value));
  const std::vector<std::string> columns = sweep_columns(sweep);
  for (std::size_t c = row.size(); c < columns.size(); ++c)
    row.push_back(csv_field(cells[columns[c]]));
  return fmt::format("{}", fmt::join(row, ","));
}

Results parse_results(std::string_view text, const std::string &source,
                      UnfinishedLastLine last_line) {
  Results results;
  std::size_t columns = 0;
  std::size_t run_column = 0;
  std::size_t id_column = 0;
  std::optional<std::size_t> points_column;
  int line_number = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = text.find('\n', begin);
    ++line_number;
    if (end == std::string_view::npos) {
      if (last_line == UnfinishedLastLine::refuse) {
        throw Error(source, line_number, "",
                    "the last row has no line break: the file was cut short");
      }
      break; // a journal cut short by a kill: the run is redone
    }
    const std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    // ppsim writes text: a NUL is damage (a file system that zero-filled a cut write).
    if (line.find('\0') != std::string_view::npos)
      throw Error(source, line_number, "", "a NUL byte: the file is damaged, not as ppsim wrote it");
    const std::vector<std::string> fields = split_csv_line(line);
    if (line_number == 1) {
      results.header = std::string(line);
      columns = fields.size();
      const auto run = std::find(fields.begin(), fields.end(), "run");
      const auto id = std::find(fields.begin(), fields.end(), "run_id");
      if (run == fields.end() || id == fields.end()) {
        throw Error(source, 1, "", "not a sweep results file (no 'run' and 'run_id' columns)");
      }
      run_column = at(run - fields.begin());
      id_column = at(id - fields.begin());
      const auto points = std::find(fields.begin(), fields.end(), "points");
      if (points != fields.end())
        points_column = at(points - fields.begin());
      continue;
    }
    ResultsRow row{0, "", std::string(line), line_number, std::nullopt};
    const std::string &run = fields.size() == columns ? fields[run_column] : std::string();
    const auto [rest, error] = std::from_chars(run.data(), run.data() + run.size(), row.run);
    if (fields.size() != columns) {
      throw Error(source, line_number, "",
                  fmt::format("expected {} fields starting with a run number, got {}", columns,
                              fields.size()));
    }
    if (error != std::errc() || rest != run.data() + run.size() || run.empty()) {
      throw Error(source, line_number, "run",
                  fmt::format("expected a run number, got \"{}\"", cut_for_message(run)));
    }
    row.id = fields[id_column];
    if (points_column) {
      const std::string &points = fields[*points_column];
      std::size_t value = 0;
      const auto [end_of_points, points_error] =
          std::from_chars(points.data(), points.data() + points.size(), value);
      if (points_error != std::errc() || end_of_points != points.data() + points.size() ||
          points.empty() || row.run >= value) {
        throw Error(source, line_number, "points",
                    fmt::format("expected the sweep's point count (more than run {}), got \"{}\"",
                                row.run, cut_for_message(points)));
      }
      row.points = value;
    }
    results.rows.push_back(std::move(row));
  }
  if (line_number == 0)
    throw Error(source, 0, "", "empty results file");
  return results;
}

Shard parse_shard(const std::string &text, const std::string &field) {
  const std::size_t slash = text.find('/');
  Shard shard;
  const auto number = [&text](std::size_t begin, std::size_t end, std::size_t &value) {
    const auto [rest, error] = std::from_chars(text.data() + begin, text.data() + end, value);
    return error == std::errc() && rest == text.data() + end && begin < end;
  };
  if (slash == std::string::npos || !number(0, slash, shard.shard) ||
      !number(slash + 1, text.size(), shard.count) || shard.count == 0 ||
      shard.shard >= shard.count) {
    throw Error("", 0, field, fmt::format("expected i/N with 0 <= i < N, got \"{}\"",
                                              cut_for_message(text)));
  }
  return shard;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos)
    return std::string(text);
  std::string quoted = "\"";
  for (const char c : text) {
    quoted += c;
    if (c == '"')
      quoted += '"';
  }
  return quoted + "\"";
}

std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

} // namespace ppsim
