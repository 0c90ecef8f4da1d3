// `ppsim merge`: joins the results of `ppsim sweep --shard i/N` runs into the file an unsharded
// run would have written (rows in run order).
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/scenario_options.h"

#include "base/error.h"
#include "base/text_file.h"
#include "run/sweep.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>

namespace ppsim::cli {
namespace po = boost::program_options;

int run_merge(const Args &args, std::ostream &out, std::ostream & /*err*/) {
  po::options_description options("ppsim merge SHARD.csv... [-o all.csv]");
  options.add_options()("help,h", "show this help")("output,o",
                                                    po::value<std::string>()->value_name("FILE"),
                                                    "merged CSV (default: standard output)")(
      "inputs", po::value<std::vector<std::string>>()->value_name("SHARD.csv"),
      "results of the shards");
  po::positional_options_description positional;
  positional.add("inputs", -1);
  const po::variables_map values = parse_command(args, options, positional);
  if (values.count("help")) {
    out << options << "\n";
    return kOk;
  }
  if (!values.count("inputs"))
    throw Error("", 0, "", "missing the shard results (ppsim merge SHARD.csv... -o all.csv)");

  check_outputs(given_outputs(values, {"output"}), values["inputs"].as<std::vector<std::string>>());
  std::string header;
  std::map<std::size_t, std::pair<std::string, std::string>> rows; // run -> (row, file that had it)
  // The sweep's point count, from the `points` column (docs/sweep.md), and the file it came from.
  std::optional<std::pair<std::size_t, std::string>> points;
  for (const std::string &path : values["inputs"].as<std::vector<std::string>>()) {
    const Results results =
        parse_results(read_text_file(path, "results file"), path, UnfinishedLastLine::refuse);
    if (header.empty())
      header = results.header;
    if (results.header != header)
      throw Error(path, 1, "", "the columns differ from the first file's");
    for (const ResultsRow &row : results.rows) {
      if (row.points) {
        if (!points)
          points.emplace(*row.points, path);
        if (points->first != *row.points) {
          throw Error(
              path, row.line_number, "points",
              fmt::format("the sweep has {} points here but {} in {}: shards of different sweeps?",
                          *row.points, points->first, points->second));
        }
      }
      const auto [slot, inserted] = rows.emplace(row.run, std::make_pair(row.line, path));
      if (!inserted) {
        throw Error(path, row.line_number, "",
                    fmt::format("run {} is also in {}", row.run, slot->second.second));
      }
    }
  }
  // No row at all tells neither the sweep's size nor which shards are missing: a merge of
  // shards that ran no point (or were cut before their first row) is no sweep's result.
  if (rows.empty()) {
    throw Error("", 0, "",
                "the inputs hold no rows: nothing tells how many points the sweep has; merge the "
                "shards that ran points");
  }
  // Shards take every N-th run: a gap in the run numbers means a shard (or part of one) is missing.
  std::size_t expected = 0;
  for (const auto &[run, row] : rows) {
    if (run != expected) {
      const std::string missing = run - 1 == expected
                                      ? fmt::format("run {} is", expected)
                                      : fmt::format("runs {} to {} are", expected, run - 1);
      throw Error("", 0, "", fmt::format("{} in no input: is a shard missing?", missing));
    }
    ++expected;
  }
  // The last runs missing leave no gap: the point count tells.
  if (points && expected < points->first) {
    const std::string missing = expected + 1 == points->first
                                    ? fmt::format("run {} is", expected)
                                    : fmt::format("runs {} to {} are", expected, points->first - 1);
    throw Error("", 0, "",
                fmt::format("{} in no input (the sweep has {} points): is a shard missing?",
                            missing, points->first));
  }
  std::string content = header + "\n";
  for (const auto &[run, row] : rows)
    content += row.first + "\n";
  if (values.count("output")) {
    write_file_atomically(values["output"].as<std::string>(), content);
  } else {
    out << content;
  }
  return kOk;
}

} // namespace ppsim::cli
