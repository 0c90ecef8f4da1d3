#pragma once
// Sweep files (docs/sweep.md, "Sweep files"): a base scenario and axes of values, expanded into a
// numbered list of runs. Reads files only in read_sweep_file and for run ids (FileDigests); the CLI
// runs the points and writes the rows.
#include "run/run_input.h"
#include "sim/io/report.h"

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <vector>

namespace ppsim {

/// One scenario field swept over a list of values.
struct SweepColumn {
  std::string key;    ///< dotted scenario field, also the CSV column name
  toml::array values; ///< as written in the sweep file
  std::string source; ///< sweep file name, for errors
  int line = 0;       ///< line of the key
};

/// One axis of the cartesian product: a single column, or a zip group whose columns (all of the
/// same length) advance together.
struct SweepAxis {
  std::vector<SweepColumn> columns;
  [[nodiscard]] std::size_t size() const { return columns.front().values.size(); }
};

/// One run of a sweep: its position, stable id, parameter values and the scenario to run.
/// The FNV-1a digest of each file's text, read once (thread-safe); 0 for a file that cannot be
/// read (its run reports that).
class FileDigests {
public:
  std::uint64_t of(const std::string &path);

private:
  std::mutex mutex_;
  std::map<std::string, std::uint64_t> digests_;
};

struct SweepPoint {
  std::size_t index = 0; ///< k, position in the unsharded run list
  /// 16 hex digits: a hash of everything the run's row depends on (docs/sweep.md): ppsim's
  /// version, the parameter values and the text of the files it reads.
  std::string id;
  std::vector<std::string> values; ///< one per parameter column, as CSV text (unquoted)
  RunInput input;
  std::string error; ///< why a value does not fit its field; the run is skipped
};

/// The most points a sweep may have (the product of its axes' lengths).
inline constexpr std::int64_t kMaxSweepPoints = std::int64_t{1} << 40;

/// `[rank]` (docs/sweep.md, "Ranking at every point"): each point ranks schedules and
/// recomputation policies as `compare` does, and its row is the winner.
struct SweepRank {
  std::vector<std::string> schedules; ///< every registered schedule when not given
  std::vector<std::string> policies;  ///< empty: compare's defaults for the point
};

struct Sweep {
  RunInput base;               ///< the `base` scenario (defaults when none)
  std::optional<SweepRank> rank;    ///< every point ranks; its row is the winner
  std::vector<SweepAxis> axes;      ///< in declaration order; the first varies slowest
  std::vector<std::string> metrics; ///< [output] metrics; empty = every metric
  std::string base_directory;       ///< relative file values (costs_file, ...) resolve here
  std::string base_file;            ///< the `base` scenario file, resolved; empty when none

  /// Number of runs: the product of the axis sizes (1 when there is no axis).
  [[nodiscard]] std::size_t size() const;
  /// The parameter column names, in declaration order.
  [[nodiscard]] std::vector<std::string> parameter_names() const;
  /// Run `index` (< size()). A value that does not fit its field sets `error` (with the sweep
  /// file and line) instead of throwing, so one bad point does not stop a sweep.
  [[nodiscard]] SweepPoint point(std::size_t index) const;

  /// Digests of the files runs read (base scenario, cost file, schedule file, remat plan), read
  /// once each; shared by copies and threads.
  std::shared_ptr<class FileDigests> digests = std::make_shared<FileDigests>();
};

/// Loads the base scenario named by `base = "..."` (already resolved against the sweep folder).
using ScenarioLoader = std::function<RunInput(const std::string &path)>;

/// Parses sweep TOML text; `source` names it in errors ("sweep.toml:7: field ...").
Sweep parse_sweep(std::string_view text, const std::string &source,
                  const std::string &base_directory, const ScenarioLoader &load_scenario);

/// Reads a sweep file and its base scenario file.
Sweep read_sweep_file(const std::string &path);

/// Metrics a sweep can report (`[output] metrics`), in CSV order. Without `[output] metrics`
/// a sweep reports them all, `iteration` and `throughput` only where some point has an
/// iteration's end (docs/model.md, "The iteration's end").
std::vector<std::string> sweep_metric_names();
/// The results header: run, run_id, one column per parameter, schedule, p, m, v, remat_policy,
/// feasible, the selected metrics, error.
std::vector<std::string> sweep_columns(const Sweep &sweep);
/// One results row (no line break). `report` is the simulation when the point ran; otherwise
/// `error` says why it could not (feasible is then false). A run over the memory cap names the
/// first violation in `error`.
std::string sweep_row(const Sweep &sweep, const SweepPoint &point, const SimulationReport *report,
                      const std::string &error);

/// Runs one point (run/evaluate.h, as compare evaluates its runs; with `[rank]`, the ranking of
/// run/compare.h, whose winner is the row) and returns its row; a user error (a bad value, a cost
/// file that cannot be read, a cap no plan meets, no run that fits) becomes the row's error
/// column.
std::string run_sweep_point(const Sweep &sweep, const SweepPoint &point);

/// One row of a results file.
struct ResultsRow {
  std::size_t run = 0; ///< the `run` column: position in the unsharded run list
  std::string id;      ///< the `run_id` column
  std::string line;    ///< the whole row, without its line break
  int line_number = 0;
  /// The `points` column: how many runs the whole (unsharded) sweep has; absent in files written
  /// before it existed.
  std::optional<std::size_t> points;
};

/// A results file: its header line and rows in file order.
struct Results {
  std::string header;
  std::vector<ResultsRow> rows;
};

/// Whether a last line without a line break is a journal row cut short by a kill (dropped: the
/// run is redone) or a finished file that was truncated (an error).
enum class UnfinishedLastLine { drop, refuse };

/// Parses results CSV text written by a sweep; a malformed row throws Error at `source`:line.
Results parse_results(std::string_view text, const std::string &source,
                      UnfinishedLastLine last_line = UnfinishedLastLine::drop);

/// A shard `i/N` of a run list: runs with `index mod count == shard`.
struct Shard {
  std::size_t shard = 0;
  std::size_t count = 1;
  [[nodiscard]] bool contains(std::size_t index) const { return index % count == shard; }
};

/// Parses "i/N" with 0 <= i < N; throws Error naming `field` otherwise.
Shard parse_shard(const std::string &text, const std::string &field);

/// A CSV field, quoted when it holds a comma, a quote or a line break.
std::string csv_field(std::string_view text);
/// Splits one CSV line (no line break) into unquoted fields.
std::vector<std::string> split_csv_line(std::string_view line);

} // namespace ppsim
