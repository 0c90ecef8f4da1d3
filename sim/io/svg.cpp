#include "sim/io/svg.h"
#include "base/index.h"

#include "sim/io/memory_steps.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>
#include <iterator>
#include <string_view>
#include <utility>

namespace ppsim {
namespace {

struct KindStyle {
  std::string_view fill;
  bool dark_label; // light fills take dark microbatch labels
};

// Indexed by OpKind. Recomputation kinds share a purple family so they read as one category.
constexpr std::array<KindStyle, kOpKindCount> kKindStyles{{
    {"#4c78a8", false}, // F
    {"#f58518", false}, // B
    {"#54a24b", false}, // W
    {"#e45756", false}, // BW
    {"#9d4f96", false}, // R
    {"#d6a5cf", true},  // RW
    {"#6b3a73", false}, // RBW
    {"#72b7b2", true},  // OV
}};

constexpr double kMarginLeft = 96;
constexpr double kMarginRight = 24;
constexpr double kPlotTop = 64;
constexpr double kRowGap = 4;
constexpr double kAxisHeight = 44;
constexpr double kLabelPadding = 4;   // free pixels a microbatch label needs around it
constexpr double kCharWidthEm = 0.62; // average digit width of sans-serif, in font sizes
constexpr double kInsetMinWidth = 4;  // boxes this wide get a hairline gap to their neighbours
constexpr int kTargetTickSpacingPx = 100;

// Escapes text for XML character data and attribute values. XML 1.0 cannot carry control
// characters other than tab and line breaks at all, so those become '?'.
std::string xml_escaped(std::string_view text) {
  std::string escaped;
  for (const char c : text) {
    switch (c) {
    case '&':
      escaped += "&amp;";
      break;
    case '<':
      escaped += "&lt;";
      break;
    case '>':
      escaped += "&gt;";
      break;
    case '"':
      escaped += "&quot;";
      break;
    case '\t':
    case '\n':
    case '\r':
      escaped += c;
      break;
    default:
      escaped += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
    }
  }
  return escaped;
}

// The round step (1, 2 or 5 times a power of ten) closest above `raw`.
double nice_step(double raw) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  const double factor = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
  return factor * magnitude;
}

class GanttWriter {
public:
  GanttWriter(const Scenario &scenario, const Schedule &schedule, const Simulation &simulation,
              const GanttOptions &options)
      : scenario_(scenario), schedule_(schedule), simulation_(simulation), options_(options),
        makespan_(std::max<std::int64_t>(simulation.metrics.makespan.count(), 1)),
        band_height_(options.memory_curves ? std::max(12.0, 0.8 * options.row_height_px) : 0.0),
        row_pitch_(options.row_height_px + band_height_ + kRowGap),
        font_px_(std::clamp(0.6 * options.row_height_px, 7.0, 12.0)) {
    for (const DeviceMemory &device : simulation.activations.devices) {
      memory_scale_ = std::max(memory_scale_, device.peak);
    }
    if (scenario.activations.cap)
      memory_scale_ = std::max(memory_scale_, *scenario.activations.cap);
    // A stage's chunk on its device is the number of lower stages that device holds.
    std::vector<int> chunks_seen(at(scenario.devices), 0);
    for (const int device : scenario.stage_device) {
      odd_chunk_.push_back(chunks_seen[at(device)]++ % 2 == 1);
    }
  }

  std::string write() {
    const double width = kMarginLeft + options_.plot_width_px + kMarginRight;
    const double height = axis_y() + kAxisHeight;
    const std::string title = xml_escaped(title_text());
    append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" "
           "height=\"{1}\" viewBox=\"0 0 {0} {1}\" font-family=\"Helvetica, Arial, sans-serif\">\n"
           "<title>{2}</title>\n",
           width, height, title);
    write_style();
    append("<rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n", width, height);
    append("<text class=\"title\" x=\"{}\" y=\"22\">{}</text>\n", kMarginLeft, title);
    write_legend();
    write_axis();
    for (int g = 0; g < schedule_.device_count(); ++g)
      write_device(g);
    append("</svg>\n");
    return fmt::to_string(out_);
  }

private:
  template <typename... Args> void append(fmt::format_string<Args...> format, Args &&...args) {
    fmt::format_to(std::back_inserter(out_), format, std::forward<Args>(args)...);
  }

  [[nodiscard]] double x_of(Ticks t) const {
    return kMarginLeft +
           static_cast<double>(t.count()) / static_cast<double>(makespan_) * options_.plot_width_px;
  }
  [[nodiscard]] double row_y(int g) const { return kPlotTop + g * row_pitch_; }
  [[nodiscard]] double axis_y() const { return row_y(schedule_.device_count()) - kRowGap + 2; }

  [[nodiscard]] std::string title_text() const {
    const Metrics &metrics = simulation_.metrics;
    const std::string chunks =
        scenario_.chunks > 1 ? fmt::format(", v={}", scenario_.chunks) : std::string();
    return fmt::format("{}: p={}, m={}{}, makespan {} {}, bubble {:.1f}%", schedule_.name,
                       scenario_.devices, scenario_.total_microbatches(), chunks,
                       scenario_.time_scale.readable(metrics.makespan), options_.time_unit,
                       100 * metrics.bubble_ratio);
  }

  void write_style() {
    append("<style type=\"text/css\"><![CDATA[\n"
           ".title{{font-size:16px;font-weight:bold}}\n"
           ".legend,.axis,.device-label{{font-size:11px;fill:#333}}\n"
           ".peak{{font-size:9px;fill:#666}}\n"
           ".mb{{font-size:{:.1f}px;fill:#fff;text-anchor:middle}}\n"
           ".mb.dark{{fill:#222}}\n"
           ".odd{{fill-opacity:0.6}}\n"
           ".grid{{stroke:#e4e4e4;stroke-width:1}}\n"
           ".band{{fill:#f6f6f6}}\n"
           ".memory{{fill:none;stroke:#333;stroke-width:1}}\n"
           ".cap{{stroke:#c00;stroke-width:1;stroke-dasharray:4 3}}\n"
           ".tick{{stroke:#333;stroke-width:1}}\n",
           font_px_);
    for (int k = 0; k < kOpKindCount; ++k) {
      append(".{}{{fill:{}}}\n", op_kind_token(static_cast<OpKind>(k)), kKindStyles[at(k)].fill);
    }
    append("]]></style>\n");
  }

  // Swatches for the kinds this schedule uses, then the memory curve and the cap.
  void write_legend() {
    std::array<bool, kOpKindCount> used{};
    for (const auto &ops : schedule_.device_ops) {
      for (const Op &op : ops)
        used[at(op.kind())] = true;
    }
    double x = kMarginLeft;
    const double y = 40;
    append("<g class=\"legend\">\n");
    for (int k = 0; k < kOpKindCount; ++k) {
      if (!used[at(k)])
        continue;
      const std::string_view token = op_kind_token(static_cast<OpKind>(k));
      append("<rect class=\"swatch {0}\" x=\"{1}\" y=\"{2}\" width=\"12\" height=\"12\"/>"
             "<text x=\"{3}\" y=\"{4}\">{0}</text>\n",
             token, x, y, x + 16, y + 10);
      x += 28 + 8 * static_cast<double>(token.size());
    }
    if (options_.memory_curves) {
      append("<line class=\"memory\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>"
             "<text x=\"{3}\" y=\"{4}\">activations (scale {5:.4g})</text>\n",
             x + 4, y + 6, x + 20, x + 24, y + 10, memory_scale_);
      x += 150;
      if (scenario_.activations.cap) {
        append("<line class=\"cap\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>"
               "<text x=\"{3}\" y=\"{4}\">cap K = {5:.4g}</text>\n",
               x + 4, y + 6, x + 20, x + 24, y + 10, *scenario_.activations.cap);
        x += 90;
      }
    }
    if (std::find(odd_chunk_.begin(), odd_chunk_.end(), true) != odd_chunk_.end()) {
      append("<text x=\"{}\" y=\"{}\">paler boxes: odd chunks (1, 3, ...)</text>\n", x + 4, y + 10);
    }
    append("</g>\n");
  }

  // Round ticks about every kTargetTickSpacingPx pixels, with grid lines across all rows.
  void write_axis() {
    const double makespan_units = scenario_.time_scale.to_units(Ticks{makespan_});
    const double step = nice_step(makespan_units * kTargetTickSpacingPx / options_.plot_width_px);
    const double bottom = axis_y();
    const double right = kMarginLeft + options_.plot_width_px;
    append(
        "<g class=\"axis\">\n<line class=\"tick\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n",
        kMarginLeft, bottom, right);
    for (int k = 0; k * step <= makespan_units * (1 + 1e-12); ++k) {
      const double x = kMarginLeft + k * step / makespan_units * options_.plot_width_px;
      append("<line class=\"grid\" x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\"/>"
             "<line class=\"tick\" x1=\"{0:.2f}\" y1=\"{2}\" x2=\"{0:.2f}\" y2=\"{3}\"/>"
             "<text x=\"{0:.2f}\" y=\"{4}\" text-anchor=\"middle\">{5:g}</text>\n",
             x, kPlotTop - 2, bottom, bottom + 4, bottom + 16, k * step);
    }
    append("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">time ({})</text>\n</g>\n",
           kMarginLeft + options_.plot_width_px / 2, bottom + 34, xml_escaped(options_.time_unit));
  }

  void write_device(int g) {
    const double top = row_y(g);
    const double height = options_.row_height_px;
    append(
        "<g class=\"device\" id=\"device-{}\">\n"
        "<text class=\"device-label\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">device {}</text>\n",
        g, kMarginLeft - 6, top + height / 2 + 4, g);
    const auto &ops = schedule_.device_ops[at(g)];
    std::size_t entry = 0;
    for (int d = 0; d < g; ++d)
      entry += schedule_.device_ops[at(d)].size();
    for (const Op &op : ops) {
      write_op(op, simulation_.timing.start[entry], simulation_.timing.end[entry], top);
      ++entry;
    }
    if (options_.memory_curves)
      write_memory(g, top + height + 1);
    append("</g>\n");
  }

  // A box per op; for multi-chunk placements, ops of odd chunks are paler so that a device's
  // chunks can be told apart (an OV pair spans two stages and keeps the plain colour).
  void write_op(const Op &op, Ticks start, Ticks end, double top) {
    const std::string_view token = op_kind_token(op.kind());
    const bool odd = op.kind() != OpKind::overlapped && odd_chunk_[at(op.first.stage)];
    const double x = x_of(start);
    const double width = x_of(end) - x;
    const double inset = width >= kInsetMinWidth ? 0.5 : 0.0;
    append("<rect class=\"op {}{}\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\">"
           "<title>{} [{}, {}]</title></rect>\n",
           token, odd ? " odd" : "", x + inset, top, width - 2 * inset, options_.row_height_px,
           describe(op), scenario_.time_scale.readable(start), scenario_.time_scale.readable(end));
    const std::string label = op.kind() == OpKind::overlapped
                                  ? fmt::format("{};{}", op.first.microbatch, op.second.microbatch)
                                  : fmt::format("{}", op.first.microbatch);
    if (width < static_cast<double>(label.size()) * kCharWidthEm * font_px_ + kLabelPadding)
      return;
    append("<text class=\"mb{}\" x=\"{:.2f}\" y=\"{:.1f}\">{}</text>\n",
           kKindStyles[at(op.kind())].dark_label ? " dark" : "", x + width / 2,
           top + options_.row_height_px / 2.0 + font_px_ * 0.35, label);
  }

  // The activation step function of device g in the band below its row, scaled so the largest
  // peak (or the cap) fills the band.
  void write_memory(int g, double top) {
    const DeviceMemory &memory = simulation_.activations.devices[at(g)];
    const double right = kMarginLeft + options_.plot_width_px;
    const double bottom = top + band_height_ - 1;
    const auto y_of = [&](double resident) {
      return memory_scale_ > 0 ? bottom - resident / memory_scale_ * (band_height_ - 2) : bottom;
    };
    append("<rect class=\"band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n"
           "<text class=\"peak\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">peak {:.4g}</text>\n",
           kMarginLeft, top, options_.plot_width_px, band_height_ - 1, kMarginLeft - 6, bottom - 1,
           memory.peak);
    if (scenario_.activations.cap) {
      append("<line class=\"cap\" x1=\"{0}\" y1=\"{1:.2f}\" x2=\"{2}\" y2=\"{1:.2f}\"/>\n",
             kMarginLeft, y_of(*scenario_.activations.cap), right);
    }
    const std::vector<MemoryPoint> steps = memory_steps(memory.timeline);
    if (steps.empty())
      return;
    append("<polyline class=\"memory\" points=\"{:.2f},{:.2f}", x_of(steps.front().time),
           y_of(steps.front().resident));
    for (std::size_t i = 1; i < steps.size(); ++i) {
      const double x = x_of(steps[i].time);
      append(" {0:.2f},{1:.2f} {0:.2f},{2:.2f}", x, y_of(steps[i - 1].resident),
             y_of(steps[i].resident));
    }
    append(" {:.2f},{:.2f}\"/>\n", right, y_of(steps.back().resident));
  }

  const Scenario &scenario_;
  const Schedule &schedule_;
  const Simulation &simulation_;
  const GanttOptions &options_;
  std::int64_t makespan_; // ticks, at least 1 so empty schedules do not divide by zero
  double band_height_;
  double row_pitch_;
  double font_px_;
  double memory_scale_ = 0;
  std::vector<bool> odd_chunk_; // per stage
  fmt::memory_buffer out_;
};

} // namespace

std::string gantt_svg(const Scenario &scenario, const Schedule &schedule,
                      const Simulation &simulation, const GanttOptions &options) {
  return GanttWriter(scenario, schedule, simulation, options).write();
}

} // namespace ppsim
