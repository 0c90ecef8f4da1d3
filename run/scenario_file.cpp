#include "run/scenario_file.h"

#include "base/decimal.h"
#include "base/error.h"
#include "base/text_file.h"
#include "run/toml_fields.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace ppsim {
namespace {

constexpr double kMaxMemoryAmount = 0x1p60;

// Reads values of one field, failing with the field's location and a sentence on bad types.
class FieldReader {
public:
  FieldReader(const toml::node &value, const SourceLocation &where)
      : value_(value), where_(where) {}

  [[noreturn]] void fail(const std::string &sentence) const {
    throw Error(where_.file, where_.line, where_.field, sentence);
  }

  [[nodiscard]] std::string shown() const {
    std::ostringstream text;
    if (value_.is_string()) {
      text << '"' << *value_.value<std::string>() << '"';
    } else {
      value_.visit([&text](const auto &node) { text << node; });
    }
    return text.str();
  }

  [[nodiscard]] std::int64_t integer(std::int64_t minimum) const {
    const auto number = value_.value_exact<std::int64_t>();
    if (!number)
      fail(fmt::format("expected an integer, got {}", shown()));
    if (*number < minimum)
      fail(fmt::format("expected an integer >= {}, got {}", minimum, *number));
    return *number;
  }

  [[nodiscard]] int small_integer(std::int64_t minimum) const {
    const std::int64_t number = integer(minimum);
    if (number > kLargestCount)
      fail(fmt::format("value {} is too large", number));
    return static_cast<int>(number);
  }

  [[nodiscard]] bool boolean() const {
    const auto flag = value_.value_exact<bool>();
    if (!flag)
      fail(fmt::format("expected true or false, got {}", shown()));
    return *flag;
  }

  [[nodiscard]] std::string string() const {
    const auto text = value_.value_exact<std::string>();
    if (!text)
      fail(fmt::format("expected a string, got {}", shown()));
    return *text;
  }

  [[nodiscard]] std::string choice(std::initializer_list<const char *> allowed) const {
    const std::string text = string();
    for (const char *option : allowed) {
      if (text == option)
        return text;
    }
    fail(fmt::format("expected one of {}, got \"{}\"", fmt::join(allowed, ", "),
                     cut_for_message(text)));
  }

  // Durations: numbers, or strings holding exact decimals or fractions ("1/6").
  [[nodiscard]] Rational rational(const toml::node &node) const {
    std::optional<Rational> value;
    if (const auto integer = node.value_exact<std::int64_t>()) {
      value = Rational{*integer, 1};
    } else if (const auto real = node.value_exact<double>()) {
      value = rational_from_double(*real);
    } else if (const auto text = node.value_exact<std::string>()) {
      value = parse_rational(*text);
    }
    if (!value)
      fail(out_of_exact_range(node).value_or(fmt::format("expected a number, got {}", shown())));
    if (value->numerator < 0)
      fail(fmt::format("expected a non-negative number, got {}", shown()));
    return *value;
  }

  // Why a well-formed number has no exact form: durations are decimals of at most 18 significant
  // digits between 10^-18 and about 9.2e18 units (docs/model.md, "Time"); nullopt when it is no
  // number.
  [[nodiscard]] std::optional<std::string> out_of_exact_range(const toml::node &node) const {
    std::optional<double> number = node.value_exact<double>();
    std::string digits;
    if (const auto text = node.value_exact<std::string>()) {
      char *end = nullptr;
      const double parsed = std::strtod(text->c_str(), &end);
      if (end == text->c_str() || *end != '\0' || text->find('/') != std::string::npos)
        return std::nullopt;
      number = parsed;
      for (const char c : text->substr(0, text->find_first_of("eE"))) {
        if (c >= '0' && c <= '9' && !(digits.empty() && c == '0'))
          digits += c;
      }
    }
    if (!number || *number == 0 || std::isnan(*number))
      return std::nullopt;
    // A TOML float shows as its shortest form (1e+300), not the stream's 17 digits.
    const std::string shown_value = node.is_string() ? shown() : fmt::format("{}", *number);
    if (digits.size() > 18) {
      return fmt::format("{} has more than 18 significant digits, the most an exact duration takes",
                         shown_value);
    }
    if (std::fabs(*number) < 1) {
      return fmt::format(
          "{} is below the finest time ppsim represents exactly (10^-18 of the time unit)",
          shown_value);
    }
    return fmt::format(
        "{} is above the largest time ppsim reads exactly (about 9.2e18 of the time unit)",
        shown_value);
  }

  [[nodiscard]] double real(const toml::node &node) const {
    if (const auto number = node.value<double>())
      return *number;
    if (const auto text = node.value_exact<std::string>()) {
      if (const auto value = parse_rational(*text)) {
        return to_double(*value);
      }
    }
    fail(fmt::format("expected a number, got {}", shown()));
  }

  [[nodiscard]] double fraction() const {
    const double value = real(value_);
    if (!(value >= 0 && value <= 1))
      fail(fmt::format("expected a fraction in [0, 1], got {}", shown()));
    return value;
  }

  [[nodiscard]] double bytes(const toml::node &node) const {
    std::optional<double> size;
    if (const auto number = node.value<double>()) {
      if (*number >= 0)
        size = *number;
    } else if (const auto text = node.value_exact<std::string>()) {
      size = parse_byte_size(*text);
    }
    if (!size)
      fail(fmt::format("expected a byte size such as 80GiB, got {}", shown()));
    return within_memory_range(*size);
  }

  // Memory amounts (bytes, or activations of the count and zb models) up to 2^60, so that sums
  // over every microbatch of a run stay finite and exact to the byte (docs/reliability.md).
  [[nodiscard]] double within_memory_range(double amount) const {
    if (!(std::fabs(amount) <= kMaxMemoryAmount)) {
      fail(fmt::format("{} is out of range: memory amounts are at most 2^60 (about 1.15e18)",
                       shown()));
    }
    return amount;
  }

  [[nodiscard]] std::vector<double> memory_amounts() const {
    return list<double>([this](const toml::node &n) { return within_memory_range(real(n)); });
  }

  // Scalar or list: one value for every stage, or one per stage.
  template <typename T, typename Convert> [[nodiscard]] std::vector<T> list(Convert convert) const {
    std::vector<T> values;
    if (const toml::array *array = value_.as_array()) {
      if (array->empty())
        fail("expected at least one value");
      for (const toml::node &element : *array)
        values.push_back(convert(element));
    } else {
      values.push_back(convert(value_));
    }
    return values;
  }

  [[nodiscard]] std::vector<Rational> durations() const {
    return list<Rational>([this](const toml::node &n) { return rational(n); });
  }
  [[nodiscard]] std::vector<double> byte_sizes() const {
    return list<double>([this](const toml::node &n) { return bytes(n); });
  }
  [[nodiscard]] std::vector<double> reals() const {
    return list<double>([this](const toml::node &n) { return real(n); });
  }

  [[nodiscard]] const toml::node &node() const { return value_; }
  [[nodiscard]] const SourceLocation &where() const { return where_; }

private:
  const toml::node &value_;
  const SourceLocation &where_;
};

using Setter = std::function<void(RunInput &, const FieldReader &)>;

// Layers per stage, each >= 1 (model.layers_per_stage, or model.partition as a list).
std::vector<int> layer_counts(const FieldReader &r) {
  // Each element reports with the field's own file, line and name.
  return r.list<int>(
      [&r](const toml::node &n) { return FieldReader(n, r.where()).small_integer(1); });
}

// A link's bandwidth: "50GB/s", "inf" or a positive number of bytes per second.
double bandwidth(const FieldReader &r) {
  std::optional<double> bandwidth;
  if (const auto text = r.node().value_exact<std::string>()) {
    bandwidth = parse_bandwidth(*text);
  } else if (const auto number = r.node().value<double>()) {
    if (*number > 0)
      bandwidth = *number;
  }
  if (!bandwidth)
    r.fail(fmt::format("expected a bandwidth such as \"50GB/s\" or \"inf\", got {}", r.shown()));
  return *bandwidth;
}

const std::map<std::string, Setter> &field_setters() {
  static const std::map<std::string, Setter> setters{
      {"model.cost_unit",
       [](RunInput &in, const FieldReader &r) {
         in.costs_per_device = r.choice({"stage", "device"}) == "device";
       }},
      {"model.F", [](RunInput &in, const FieldReader &r) { in.forward = r.durations(); }},
      {"model.B",
       [](RunInput &in, const FieldReader &r) { in.backward_input = r.durations(); }},
      {"model.W",
       [](RunInput &in, const FieldReader &r) { in.backward_weight = r.durations(); }},
      {"model.R",
       [](RunInput &in, const FieldReader &r) { in.recompute_forward = r.durations(); }},
      {"model.RW",
       [](RunInput &in, const FieldReader &r) { in.recompute_weight_inputs = r.durations(); }},
      {"model.RBW",
       [](RunInput &in, const FieldReader &r) { in.recompute_full_backward = r.durations(); }},
      {"model.R_selective",
       [](RunInput &in, const FieldReader &r) { in.recompute_selective = r.durations(); }},
      {"model.time_unit",
       [](RunInput &in, const FieldReader &r) {
         in.time_unit = r.choice({"s", "ms", "us"});
       }},
      {"model.w_stash", [](RunInput &in, const FieldReader &r) { in.w_stash = r.fraction(); }},
      {"model.w_residue",
       [](RunInput &in, const FieldReader &r) { in.w_residue = r.fraction(); }},
      {"model.name", [](RunInput &in, const FieldReader &r) { in.model_name = r.string(); }},
      {"model.costs_file",
       [](RunInput &in, const FieldReader &r) {
         // One file, or one per microbatch size; "" names none.
         in.costs_files = r.list<std::string>(
             [&r](const toml::node &n) { return FieldReader(n, r.where()).string(); });
         if (in.costs_files.size() == 1 && in.costs_files.front().empty())
           in.costs_files.clear();
         for (auto file = in.costs_files.begin(); file != in.costs_files.end(); ++file) {
           if (file->empty())
             r.fail("expected a file name in every element, got \"\"");
           if (std::find(in.costs_files.begin(), file, *file) != file)
             r.fail(fmt::format("lists {} twice", *file));
         }
       }},
      {"model.layers_per_stage",
       [](RunInput &in, const FieldReader &r) { in.layers_per_stage = layer_counts(r); }},
      {"model.partition",
       [](RunInput &in, const FieldReader &r) {
         // A list is an explicit split (the line `ppsim partition` prints); a name asks for one.
         if (r.node().is_array()) {
           in.layers_per_stage = layer_counts(r);
           in.partition = "even";
         } else {
           in.partition = r.choice({"cost", "even", "balanced", "remat-aware"});
         }
       }},
      {"model.memory.act_bytes",
       [](RunInput &in, const FieldReader &r) { in.bytes.activation = r.byte_sizes(); }},
      {"model.memory.selective_act_bytes",
       [](RunInput &in, const FieldReader &r) {
         in.bytes.selective_activation = r.byte_sizes();
       }},
      {"model.memory.kept_after_b",
       [](RunInput &in, const FieldReader &r) { in.bytes.kept_after_b = r.byte_sizes(); }},
      {"model.memory.kept_after_w",
       [](RunInput &in, const FieldReader &r) { in.bytes.kept_after_w = r.byte_sizes(); }},
      {"model.memory.weight_input_bytes",
       [](RunInput &in, const FieldReader &r) { in.bytes.weight_inputs = r.byte_sizes(); }},
      {"model.memory.ckpt_bytes",
       [](RunInput &in, const FieldReader &r) { in.bytes.checkpoint = r.byte_sizes(); }},
      {"model.memory.param_bytes",
       [](RunInput &in, const FieldReader &r) { in.bytes.parameters = r.byte_sizes(); }},
      {"model.memory.grad_bytes",
       [](RunInput &in, const FieldReader &r) { in.bytes.gradients = r.byte_sizes(); }},
      {"model.memory.optimizer_bytes",
       [](RunInput &in, const FieldReader &r) { in.bytes.optimizer = r.byte_sizes(); }},
      {"model.memory.peak_f",
       [](RunInput &in, const FieldReader &r) { in.bytes.peak_forward = r.byte_sizes(); }},
      {"model.memory.peak_b",
       [](RunInput &in, const FieldReader &r) {
         in.bytes.peak_backward_input = r.byte_sizes();
       }},
      {"model.memory.peak_w",
       [](RunInput &in, const FieldReader &r) {
         in.bytes.peak_backward_weight = r.byte_sizes();
       }},
      {"model.memory.peak_ckpt",
       [](RunInput &in, const FieldReader &r) { in.bytes.peak_checkpoint = r.byte_sizes(); }},
      {"model.memory.out_bytes",
       [](RunInput &in, const FieldReader &r) { in.bytes.output = r.byte_sizes(); }},
      {"model.memory.m_ba_fraction",
       [](RunInput &in, const FieldReader &r) { in.m_ba_fraction = r.fraction(); }},
      {"model.memory.mem_f",
       [](RunInput &in, const FieldReader &r) { in.zb_mem_f = r.memory_amounts(); }},
      {"model.memory.mem_w",
       [](RunInput &in, const FieldReader &r) { in.zb_mem_w = r.memory_amounts(); }},
      {"cluster.devices",
       [](RunInput &in, const FieldReader &r) { in.devices = r.small_integer(1); }},
      {"cluster.optimizer_shards",
       [](RunInput &in, const FieldReader &r) { in.optimizer_shards = r.small_integer(1); }},
      {"cluster.memory",
       [](RunInput &in, const FieldReader &r) { in.budget_bytes = r.bytes(r.node()); }},
      {"cluster.runtime_bytes",
       [](RunInput &in, const FieldReader &r) { in.runtime_bytes = r.bytes(r.node()); }},
      {"cluster.K",
       [](RunInput &in, const FieldReader &r) {
         const double k = r.real(r.node());
         if (!(k > 0))
           r.fail(fmt::format("expected a positive memory cap, got {}", r.shown()));
         in.cap_activations = k;
       }},
      {"cluster.memory_model",
       [](RunInput &in, const FieldReader &r) {
         const std::string model = r.choice({"count", "zb", "bytes"});
         in.memory_model = model == "count" ? MemoryModel::count
                           : model == "zb"  ? MemoryModel::zb
                                            : MemoryModel::bytes;
       }},
      {"cluster.link.latency",
       [](RunInput &in, const FieldReader &r) { in.latency = r.rational(r.node()); }},
      {"cluster.link.bandwidth",
       [](RunInput &in, const FieldReader &r) { in.bandwidth_bytes_per_second = bandwidth(r); }},
      {"cluster.data_parallel",
       [](RunInput &in, const FieldReader &r) { in.data_parallel = r.small_integer(1); }},
      {"cluster.data_parallel_link.latency",
       [](RunInput &in, const FieldReader &r) { in.data_parallel_latency = r.rational(r.node()); }},
      {"cluster.data_parallel_link.bandwidth",
       [](RunInput &in, const FieldReader &r) {
         in.data_parallel_bandwidth_bytes_per_second = bandwidth(r);
       }},
      {"iteration.end",
       [](RunInput &in, const FieldReader &r) {
         const std::string end = r.choice({"none", "sync", "post-validation"});
         in.iteration_end = end == "none"   ? IterationEnd::none
                            : end == "sync" ? IterationEnd::sync
                                            : IterationEnd::post_validation;
       }},
      {"iteration.optimizer",
       [](RunInput &in, const FieldReader &r) { in.optimizer_step = r.durations(); }},
      {"cluster.runtime",
       [](RunInput &in, const FieldReader &r) {
         const std::string runtime = r.choice({"ideal", "torch", "megatron"});
         in.runtime = runtime == "ideal"   ? Runtime::ideal
                      : runtime == "torch" ? Runtime::torch
                                           : Runtime::megatron;
       }},
      {"cluster.op_overhead",
       [](RunInput &in, const FieldReader &r) { in.op_overhead = r.rational(r.node()); }},
      {"cluster.gpus_per_node",
       [](RunInput &in, const FieldReader &r) { in.gpus_per_node = r.small_integer(1); }},
      {"cluster.inter_node_link.latency",
       [](RunInput &in, const FieldReader &r) { in.inter_node_latency = r.rational(r.node()); }},
      {"cluster.inter_node_link.bandwidth",
       [](RunInput &in, const FieldReader &r) {
         in.inter_node_bandwidth_bytes_per_second = bandwidth(r);
       }},
      {"cluster.link.contention",
       [](RunInput &in, const FieldReader &r) { in.contention = r.boolean(); }},
      {"cluster.link.blocking",
       [](RunInput &in, const FieldReader &r) { in.blocking = r.boolean(); }},
      {"pipeline.schedule",
       [](RunInput &in, const FieldReader &r) { in.schedule = r.string(); }},
      {"pipeline.microbatches",
       [](RunInput &in, const FieldReader &r) { in.microbatches = r.small_integer(1); }},
      {"pipeline.microbatch_size",
       [](RunInput &in, const FieldReader &r) { in.microbatch_size = r.small_integer(1); }},
      {"pipeline.chunks",
       [](RunInput &in, const FieldReader &r) { in.chunks = r.small_integer(1); }},
      {"pipeline.group_size",
       [](RunInput &in, const FieldReader &r) { in.group_size = r.small_integer(1); }},
      {"pipeline.overlap_fb",
       [](RunInput &in, const FieldReader &r) { in.overlap_fb = r.rational(r.node()); }},
      {"pipeline.schedule_file",
       [](RunInput &in, const FieldReader &r) { in.schedule_file = r.string(); }},
      {"remat.policy",
       [](RunInput &in, const FieldReader &r) {
         // One policy, or (for `compare`) a comma-separated list of them.
         const std::string policies = r.string();
         std::stringstream list(policies);
         for (std::string policy; std::getline(list, policy, ',');) {
           if (policy != "none" && policy != "full" && policy != "selective" && policy != "ilp" &&
               !policy.starts_with("file:"))
             r.fail(fmt::format(
                 "unknown remat policy '{}' (expected none, full, selective, ilp or file:PATH)",
                 policy));
         }
         in.remat_policy = policies;
       }},
      {"remat.timing",
       [](RunInput &in, const FieldReader &r) {
         in.remat_timing =
             r.choice({"early", "lumped"}) == "early" ? RematTiming::early : RematTiming::lumped;
       }},
      {"remat.time_limit",
       [](RunInput &in, const FieldReader &r) {
         const double seconds = r.real(r.node());
         if (!(seconds > 0))
           r.fail(fmt::format("expected a positive number of seconds, got {}", r.shown()));
         in.remat_time_limit_seconds = seconds;
       }},
      {"remat.node_limit",
       [](RunInput &in, const FieldReader &r) { in.remat_node_limit = r.integer(0); }},
      {"remat.gap",
       [](RunInput &in, const FieldReader &r) { in.remat_relative_gap = r.fraction(); }},
      {"remat.checkpoint_levels",
       [](RunInput &in, const FieldReader &r) {
         const int levels = r.small_integer(0);
         if (levels > kMaxCheckpointLevels)
           r.fail(fmt::format("expected at most {} levels, got {}", kMaxCheckpointLevels, levels));
         in.remat_checkpoint_levels = levels;
       }},
  };
  return setters;
}

// The tables the fields live in ("model", "model.memory", ...).
std::vector<std::string> scenario_table_names() {
  std::set<std::string> tables;
  for (const auto &entry : field_setters()) {
    for (std::size_t dot = entry.first.find('.'); dot != std::string::npos;
         dot = entry.first.find('.', dot + 1))
      tables.insert(entry.first.substr(0, dot));
  }
  return {tables.begin(), tables.end()};
}

// Walks tables down to leaves, setting each leaf by its dotted key. An unknown table with
// fields is refused at its first field; an empty one here, rather than accepted silently.
void apply_table(RunInput &input, const toml::table &table, const std::string &prefix,
                 const std::string &source) {
  for (const auto &[key, node] : table) {
    const std::string dotted =
        prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const toml::table *child = node.as_table()) {
      const std::vector<std::string> tables = scenario_table_names();
      if (child->empty() && std::find(tables.begin(), tables.end(), dotted) == tables.end()) {
        throw Error(source, static_cast<int>(node.source().begin.line), "",
                    unknown_name("table", dotted, tables));
      }
      apply_table(input, *child, dotted, source);
      continue;
    }
    set_scenario_field(input, dotted, node,
                       SourceLocation{source, static_cast<int>(node.source().begin.line), dotted});
  }
}

} // namespace

void set_scenario_field(RunInput &input, const std::string &key, const toml::node &value,
                        const SourceLocation &where) {
  const auto &setters = field_setters();
  const auto setter = setters.find(key);
  if (setter == setters.end()) {
    throw Error(where.file, where.line, "", unknown_name("field", key, scenario_field_names()));
  }
  setter->second(input, FieldReader(value, where));
  input.origins[key] = where;
}

void set_scenario_field_from_text(RunInput &input, const std::string &key,
                                  const std::string &text, const SourceLocation &where) {
  // A bare word such as zb-h1 or 80GiB is not TOML; it is taken as the string it spells.
  try {
    const toml::table parsed = toml::parse("value = " + text);
    if (parsed.size() == 1 && parsed.contains("value")) {
      set_scenario_field(input, key, *parsed.get("value"), where);
      return;
    }
  } catch (const toml::parse_error &) {
    // not a TOML value: fall through to the plain string
  }
  const toml::value<std::string> as_string(text);
  set_scenario_field(input, key, as_string, where);
}

std::vector<std::string> scenario_field_names() {
  std::vector<std::string> names;
  for (const auto &entry : field_setters())
    names.push_back(entry.first);
  return names;
}

RunInput parse_scenario(std::string_view text, const std::string &source,
                             const std::string &base_directory) {
  RunInput input;
  apply_table(input, parse_toml(text, source), "", source);
  for (std::string &file : input.costs_files)
    file = resolve_path(file, base_directory);
  input.schedule_file = resolve_path(input.schedule_file, base_directory);
  return input;
}

RunInput read_scenario_file(const std::string &path) {
  return parse_scenario(read_text_file(path, "scenario file"), path, parent_directory(path));
}

toml::table parse_toml(std::string_view text, const std::string &source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error &error) {
    throw Error(source, static_cast<int>(error.source().begin.line), "",
                fmt::format("malformed TOML: {}", error.description()));
  }
}

} // namespace ppsim
