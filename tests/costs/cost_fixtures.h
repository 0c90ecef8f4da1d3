#pragma once
// Cost-file rows and files with every column set, and the readers' errors, shared by the costs/
// suites.
#include "costs/cost_file.h"

#include "tests/base/error_support.h"

#include <cstdint>
#include <string>

namespace ppsim::testing {

/// Two layers with only the required columns.
inline const char *const kMinimal = "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n"
                                    "1,0,1.5,2,1\n"
                                    "1,1,0.25,0.5,1/3\n";

/// A CSV file: the required columns, then `extra_columns` (",input_bytes"), then `rows`.
inline std::string with_required_columns(const std::string &rows,
                                         const std::string &extra_columns = "") {
  return "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms" + extra_columns + "\n" + rows;
}

/// The error parse_cost_csv throws for `text` read as "layers.csv", or "no error".
inline std::string csv_error(const std::string &text) {
  return error_message([&] { ppsim::parse_cost_csv(text, "layers.csv"); });
}

/// The error parse_cost_json throws for `text` read as "layers.json", or "no error".
inline std::string json_error(const std::string &text) {
  return error_message([&] { ppsim::parse_cost_json(text, "layers.json"); });
}

/// A row with every column set to a distinct value (layer `id`).
inline ppsim::CostRow full_row(int id) {
  using ppsim::CostRow;
  CostRow row;
  row.layer_id = id;
  row.layer_name = "block" + std::to_string(id);
  row.fwd_ms = ppsim::normalized({3 + id, 2});
  row.bwd_input_ms = {7, 4};
  row.bwd_weight_ms = {1, 1000000};
  row.bwd_total_ms = {2, 1};
  row.recompute_ms = {3, 2};
  row.recompute_selective_ms = {1, 10};
  row.fwd_ms_p10 = {1, 1};
  row.fwd_ms_p90 = {2, 1};
  row.bwd_input_ms_p10 = {1, 3}; // not a finite decimal: written as "1/3"
  row.bwd_input_ms_p90 = {2, 1};
  row.bwd_weight_ms_p10 = {0, 1};
  row.bwd_weight_ms_p90 = {1, 1};
  row.fwd_flops = 1'000'000'000'000ULL + static_cast<std::uint64_t>(id);
  row.bwd_input_flops = 18'446'744'073'709'551'615ULL; // uint64 max survives
  row.bwd_weight_flops = 3;
  row.recompute_flops = 4;
  row.input_bytes = 100 + id;
  row.output_bytes = 200 + id;
  row.stored_input_bytes = 300;
  row.activation_bytes_full = 7079985152.0;
  row.activation_bytes_selective = 1.5;
  row.bwd_w_stash_bytes = 50 + id;
  row.bwd_w_act_bytes = 20 + id;
  row.param_bytes = 1e9;
  row.grad_bytes = 2e9;
  row.optimizer_state_bytes = 3e9;
  row.fwd_peak_temp_bytes = 10.0 * (id + 1);
  row.bwd_input_peak_temp_bytes = 30.0 - id;
  row.bwd_weight_peak_temp_bytes = 5;
  row.recompute_peak_temp_bytes = 6;
  row.n_samples = 20;
  row.source = "cupti";
  return row;
}

/// Three full rows with metadata.
inline ppsim::CostFile sample_file() {
  using ppsim::CostFile;
  CostFile file;
  for (int id = 0; id < 3; ++id)
    file.rows.push_back(full_row(id));
  file.metadata.device = "NVIDIA H100 80GB HBM3";
  file.metadata.sm_count = 132;
  file.metadata.h = 4096;
  file.metadata.timer = "cupti";
  file.metadata.warnings = {"dropped records: 3"};
  file.optimizer_step_ms = 1.25;
  return file;
}

} // namespace ppsim::testing
