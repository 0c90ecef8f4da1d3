// Cost files at several microbatch sizes (docs/profiler.md, "Microbatch sizes"): the file at the
// size as it is, exact linear interpolation between the sizes around it, and the refusals.
#include "costs/microbatch_sizes.h"

#include "base/error.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace ppsim;

namespace {

/// Two layers profiled at microbatch size `b`, with times and bytes that grow with it (not in
/// proportion: a larger size fills the GPU better).
CostFile profiled_at(std::int64_t b, Rational forward, double stash, const std::string &name) {
  CostFile file;
  file.metadata.b = b;
  file.source_name = name;
  for (int layer = 0; layer < 2; ++layer) {
    CostRow row;
    row.layer_id = layer;
    row.layer_name = "block" + std::to_string(layer);
    row.fwd_ms = forward;
    row.bwd_input_ms = forward * Rational{2, 1};
    row.bwd_weight_ms = forward;
    row.bwd_total_ms = forward * Rational{3, 1};
    row.recompute_ms = forward;
    row.activation_bytes_full = stash;
    row.param_bytes = 1000; // the weights do not depend on the size
    row.fwd_flops = static_cast<std::uint64_t>(b) * 100;
    row.n_samples = static_cast<std::uint64_t>(10 * b);
    file.rows.push_back(row);
  }
  return file;
}

std::string error_of(const std::vector<CostFile> &files, std::int64_t size) {
  try {
    cost_file_at_size(files, size);
  } catch (const Error &error) {
    return error.what();
  }
  return "";
}

} // namespace

TEST_CASE("a measured size is read as it is; between two sizes each value is interpolated") {
  // b = 1: F = 1.5 ms; b = 4: F = 4.2 ms (1.05 a sample, against 1.5 at b = 1).
  const std::vector<CostFile> files{profiled_at(4, {42, 10}, 4000, "b4.json"),
                                    profiled_at(1, {15, 10}, 1000, "b1.json")};
  const CostFile four = cost_file_at_size(files, 4);
  CHECK(four.source_name == "b4.json");
  CHECK(four.rows[1].fwd_ms == Rational{42, 10});
  // b = 2 is a third of the way from 1 to 4: 1.5 + (4.2 - 1.5) / 3 = 2.4 ms, exactly.
  const CostFile two = cost_file_at_size(files, 2);
  CHECK(two.metadata.b == 2);
  CHECK(two.source_name == "b1.json and b4.json at microbatch size 2");
  REQUIRE(two.rows.size() == 2);
  const CostRow &row = two.rows[0];
  CHECK(row.fwd_ms == Rational{12, 5});
  CHECK(row.bwd_input_ms == Rational{24, 5});
  CHECK(row.bwd_total_ms == Rational{36, 5});
  CHECK(row.activation_bytes_full == doctest::Approx(2000));
  CHECK(row.param_bytes == doctest::Approx(1000));
  CHECK(row.fwd_flops == 200);
  CHECK(row.n_samples == 10); // what both measurements rest on: the fewer
  CHECK(row.layer_name == "block0");
  // b = 3: two thirds of the way, a time with no finite decimal form stays exact.
  CHECK(cost_file_at_size(files, 3).rows[0].fwd_ms == Rational{33, 10});
  const std::vector<CostFile> thirds{profiled_at(1, {1, 1}, 0, "a.json"),
                                     profiled_at(4, {2, 1}, 0, "b.json")};
  CHECK(cost_file_at_size(thirds, 2).rows[0].fwd_ms == Rational{4, 3});
}

TEST_CASE("sizes outside the measured ones, files without a size, and unlike files are refused") {
  const std::vector<CostFile> files{profiled_at(2, {2, 1}, 0, "b2.json"),
                                    profiled_at(8, {7, 1}, 0, "b8.json")};
  CHECK(error_of(files, 1) ==
        "microbatch size 1 is outside the sizes the cost files were profiled at (2, 8): kernels "
        "are not linear in the size, so ppsim interpolates between measured sizes and does not "
        "extrapolate; profile at 1");
  CHECK(error_of(files, 16).starts_with("microbatch size 16 is outside the sizes"));
  std::vector<CostFile> unsized = files;
  unsized[1].metadata.b = 0;
  CHECK(error_of(unsized, 4) ==
        "b8.json: records no microbatch size (metadata \"b\": CSV files have none, ppsim profile "
        "import records it with --batch): cost files at several sizes are JSON files that "
        "record it");
  const std::vector<CostFile> twice{profiled_at(2, {2, 1}, 0, "x.json"),
                                    profiled_at(2, {2, 1}, 0, "y.json")};
  CHECK(error_of(twice, 2) ==
        "y.json: was profiled at microbatch size 2, as x.json was: give one file per size");
  std::vector<CostFile> other_model = files;
  other_model[1].rows.pop_back();
  CHECK(error_of(other_model, 4) == "b8.json: has 1 layers, b2.json has 2: files of one model at "
                                    "several microbatch sizes hold the same layers");
  other_model = files;
  other_model[1].rows[1].layer_type = "llama_block";
  CHECK(error_of(other_model, 4) ==
        "b8.json: layer 1 is block1 (llama_block), b2.json has block1 (gpt_block): files of one "
        "model at several microbatch sizes hold the same layers");
  other_model = files;
  other_model[1].rows[0].absent_columns = {"activation_bytes_full"};
  CHECK(error_of(other_model, 4) ==
        "b8.json: layer 0 has no activation_bytes_full, which b2.json measures: interpolating "
        "between microbatch sizes needs it at both");
  other_model = files;
  other_model[0].metadata.s = 2048;
  other_model[1].metadata.s = 4096;
  CHECK(error_of(other_model, 4) == "b8.json: was profiled with s = 4096, b2.json with s = 2048: "
                                    "files at several microbatch sizes differ in the size only");
  other_model[1].metadata.s = 0; // unknown in one file: not compared
  other_model[1].metadata.tp = 2;
  CHECK(error_of(other_model, 4).starts_with("b8.json: was profiled with tp = 2, b2.json with "
                                             "tp = 1"));
  other_model = files;
  other_model[0].only_columns = {"schema_version", "layer_id", "fwd_ms", "bwd_input_ms",
                                 "bwd_weight_ms"};
  CHECK(error_of(other_model, 4).starts_with("b2.json: has no column layer_name, which b8.json "
                                             "has: interpolating between microbatch sizes"));
}
