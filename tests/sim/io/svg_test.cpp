// SVG Gantt writer: document structure, one box per op, titles, labels and memory curves.
#include "base/index.h"
#include "sim/io/svg.h"

#include "../test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <fmt/format.h>
#include <sstream>
#include <string>
#include <vector>

using namespace ppsim;
using ppsim::testing::run_schedule;
using ppsim::testing::uniform_input;

namespace {

std::string svg_of(const testing::Run &run, const GanttOptions &options = {}) {
  return gantt_svg(run.scenario, run.schedule, run.simulation, options);
}

std::size_t count(const std::string &text, const std::string &needle) {
  std::size_t found = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    ++found;
  }
  return found;
}

std::size_t ops_of_kind(const Schedule &schedule, OpKind kind) {
  std::size_t found = 0;
  for (const auto &ops : schedule.device_ops) {
    found += ppsim::at(
        std::count_if(ops.begin(), ops.end(), [&](const Op &op) { return op.kind() == kind; }));
  }
  return found;
}

// Minimal well-formedness: every element closes in order, markup sections are terminated,
// and '&' only starts an entity. Returns "" or what went wrong.
std::string xml_structure_error(const std::string &xml) {
  std::vector<std::string> open;
  std::size_t at = 0;
  while ((at = xml.find('<', at)) != std::string::npos) {
    const auto skip_to = [&](const std::string &end) {
      const std::size_t stop = xml.find(end, at);
      at = stop == std::string::npos ? stop : stop + end.size();
      return stop != std::string::npos;
    };
    if (xml.compare(at, 2, "<?") == 0) {
      if (!skip_to("?>"))
        return "unterminated declaration";
      continue;
    }
    if (xml.compare(at, 9, "<![CDATA[") == 0) {
      if (!skip_to("]]>"))
        return "unterminated CDATA";
      continue;
    }
    const std::size_t close = xml.find('>', at);
    if (close == std::string::npos)
      return "unterminated tag";
    std::string tag = xml.substr(at + 1, close - at - 1);
    at = close + 1;
    if (tag.starts_with('/')) {
      if (open.empty() || open.back() != tag.substr(1))
        return "mismatched </" + tag.substr(1) + ">";
      open.pop_back();
    } else if (!tag.ends_with('/')) {
      open.push_back(tag.substr(0, tag.find_first_of(" \n")));
    }
  }
  if (!open.empty())
    return "unclosed <" + open.back() + ">";
  for (std::size_t amp = xml.find('&'); amp != std::string::npos; amp = xml.find('&', amp + 1)) {
    const std::string rest = xml.substr(amp, 6);
    if (!rest.starts_with("&amp;") && !rest.starts_with("&lt;") && !rest.starts_with("&gt;") &&
        !rest.starts_with("&quot;")) {
      return "bare &";
    }
  }
  return "";
}

// The y coordinates of every memory polyline, in device order.
std::vector<std::vector<double>> memory_curve_ys(const std::string &svg) {
  std::vector<std::vector<double>> curves;
  const std::string marker = "<polyline class=\"memory\" points=\"";
  for (std::size_t at = svg.find(marker); at != std::string::npos; at = svg.find(marker, at + 1)) {
    const std::size_t begin = at + marker.size();
    std::istringstream points(svg.substr(begin, svg.find('"', begin) - begin));
    std::vector<double> ys;
    double x = 0;
    double y = 0;
    char comma = 0;
    while (points >> x >> comma >> y)
      ys.push_back(y);
    curves.push_back(ys);
  }
  return curves;
}

} // namespace

TEST_CASE("svg: a well-formed SVG 1.1 document with a box per op, coloured by kind") {
  const auto run = run_schedule("1f1b-split", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  const std::string svg = svg_of(run);
  CHECK(svg.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "));
  CHECK(svg.find("xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"") != std::string::npos);
  CHECK(xml_structure_error(svg) == "");
  CHECK(count(svg, "<rect class=\"op ") == run.schedule.op_count());
  CHECK(count(svg, "<rect class=\"op F\"") == ops_of_kind(run.schedule, OpKind::forward));
  CHECK(count(svg, "<rect class=\"op B\"") == ops_of_kind(run.schedule, OpKind::backward_input));
  CHECK(count(svg, "<rect class=\"op W\"") == ops_of_kind(run.schedule, OpKind::backward_weight));
  CHECK(count(svg, "<rect class=\"op F\"") == 32);
  // Each kind has its own fill, and the legend shows exactly the kinds used.
  CHECK(svg.find(".F{fill:#4c78a8}") != std::string::npos);
  CHECK(svg.find(".B{fill:#f58518}") != std::string::npos);
  CHECK(svg.find(".W{fill:#54a24b}") != std::string::npos);
  CHECK(count(svg, "<rect class=\"swatch ") == 3);
  CHECK(count(svg, "<g class=\"device\"") == 4);
}

TEST_CASE("svg: title, time axis and op geometry") {
  const auto run = run_schedule("1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  GanttOptions options;
  options.plot_width_px = 660; // 20 px per unit of the 33-unit makespan
  const std::string svg = svg_of(run, options);
  CHECK(svg.find(">1f1b: p=4, m=8, makespan 33 ms, bubble 27.3%</text>") != std::string::npos);
  CHECK(svg.find("<title>1f1b: p=4, m=8, makespan 33 ms") != std::string::npos);
  // Ticks every 5 units (about 100 px apart) from 0 to 30, and the unit on the axis.
  CHECK(svg.find(">30</text>") != std::string::npos);
  CHECK(svg.find(">35</text>") == std::string::npos);
  CHECK(count(svg, "text-anchor=\"middle\">") == 8);
  CHECK(svg.find(">time (ms)</text>") != std::string::npos);
  // F(0,0) spans [0, 1]: 20 px from the plot's left edge (96), inset by half a pixel each side.
  CHECK(svg.find("<rect class=\"op F\" x=\"96.50\" y=\"64\" width=\"19.00\" height=\"20\">"
                 "<title>F(0,0) [0, 1]</title>") != std::string::npos);
  // Device 3's BW(3,7) ends at 27 units = 540 px; it starts at 25.
  CHECK(svg.find("x=\"596.50\" y=\"184\" width=\"39.00\" height=\"20\"><title>BW(3,7) [25, 27]") !=
        std::string::npos);
}

TEST_CASE("svg: the title shows m as the user wrote it, both pipes of DualPipe together") {
  const auto run = run_schedule("dualpipe", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  REQUIRE(run.scenario.pipes == 2);
  CHECK(svg_of(run).find("<title>dualpipe: p=4, m=8,") != std::string::npos);
}

TEST_CASE("svg: microbatch labels where boxes are wide enough, none when too narrow") {
  const auto run = run_schedule("1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  const std::string wide = svg_of(run);
  CHECK(count(wide, "<text class=\"mb") == run.schedule.op_count());
  CHECK(wide.find("<text class=\"mb\" x=\"") != std::string::npos);
  GanttOptions narrow;
  narrow.plot_width_px = 100; // 3 px per unit: no digit fits
  const std::string tight = svg_of(run, narrow);
  CHECK(count(tight, "<text class=\"mb") == 0);
  CHECK(count(tight, "<rect class=\"op ") == run.schedule.op_count());

  const auto big = run_schedule("1f1b", uniform_input(64, 256, {1, 1}, {1, 1}, {1, 1}));
  const std::string large = svg_of(big);
  CHECK(xml_structure_error(large) == "");
  CHECK(count(large, "<rect class=\"op ") == 64 * 256 * 2);
  CHECK(count(large, "<text class=\"mb") == 0);
  CHECK(count(large, "<polyline class=\"memory\"") == 64);
}

TEST_CASE("svg: odd chunks of multi-chunk placements are paler") {
  const auto run = run_schedule("interleaved-1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  REQUIRE(run.scenario.chunks == 2);
  const std::string svg = svg_of(run);
  // Round robin: stages 0-3 are chunk 0, stages 4-7 chunk 1, 8 x 4 forwards each.
  CHECK(count(svg, "<rect class=\"op F\"") == 32);
  CHECK(count(svg, "<rect class=\"op F odd\"") == 32);
  CHECK(count(svg, "<rect class=\"op BW odd\"") == 32);
  const std::size_t stage5 = svg.find("<title>F(5,0) [");
  CHECK(svg.rfind("<rect class=\"op F odd\"", stage5) == svg.rfind("<rect ", stage5));
  CHECK(svg.find(">paler boxes: odd chunks (1, 3, ...)</text>") != std::string::npos);
  const auto single = run_schedule("1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  CHECK(count(svg_of(single), " odd") == 0);
}

TEST_CASE("svg: overlapped ops are labelled with both microbatches") {
  const auto run = run_schedule("dualpipe", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  const std::string svg = svg_of(run);
  CHECK(xml_structure_error(svg) == "");
  const std::size_t overlapped = ops_of_kind(run.schedule, OpKind::overlapped);
  REQUIRE(overlapped > 0);
  CHECK(count(svg, "<rect class=\"op OV\"") == overlapped);
  CHECK(count(svg, "<text class=\"mb dark\"") == overlapped);
  for (const auto &ops : run.schedule.device_ops) {
    for (const Op &op : ops) {
      if (op.kind() != OpKind::overlapped)
        continue;
      CHECK(svg.find(fmt::format(">{};{}</text>", op.first.microbatch, op.second.microbatch)) !=
            std::string::npos);
    }
  }
}

TEST_CASE("svg: memory curves scale to the largest peak; the cap is dashed") {
  auto input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  const auto run = run_schedule("1f1b", input);
  const std::string svg = svg_of(run);
  const auto curves = memory_curve_ys(svg);
  REQUIRE(curves.size() == 4);
  // 1F1B peaks 4, 3, 2, 1: each curve rises that fraction of device 0's height above zero.
  const auto height = [](const std::vector<double> &ys) {
    return *std::max_element(ys.begin(), ys.end()) - *std::min_element(ys.begin(), ys.end());
  };
  REQUIRE(height(curves[0]) > 0);
  for (std::size_t g = 0; g < 4; ++g) {
    CAPTURE(g);
    CHECK(height(curves[g]) / height(curves[0]) == doctest::Approx((4.0 - g) / 4).epsilon(0.01));
    // Ends with nothing resident: back at the band's baseline.
    CHECK(curves[g].back() == *std::max_element(curves[g].begin(), curves[g].end()));
  }
  CHECK(svg.find(">peak 4</text>") != std::string::npos);
  CHECK(svg.find(">peak 1</text>") != std::string::npos);
  CHECK(count(svg, "class=\"cap\"") == 0);

  input.cap_activations = 8;
  const auto capped = run_schedule("1f1b", input);
  const std::string with_cap = svg_of(capped);
  CHECK(count(with_cap, "<line class=\"cap\"") == 4 + 1); // one per device and the legend's
  CHECK(with_cap.find(">cap K = 8</text>") != std::string::npos);
  // The scale is now the cap: device 0's peak 4 fills half of what it filled before.
  const auto capped_curves = memory_curve_ys(with_cap);
  CHECK(height(capped_curves[0]) / height(curves[0]) == doctest::Approx(0.5).epsilon(0.01));

  GanttOptions without;
  without.memory_curves = false;
  CHECK(count(svg_of(run, without), "<polyline") == 0);
}

TEST_CASE("svg: names are escaped") {
  auto run = run_schedule("gpipe", uniform_input(2, 2, {1, 1}, {1, 1}, {0, 1}));
  run.schedule.name = "a<b>&\"c\"\x01";
  const std::string svg = svg_of(run);
  CHECK(svg.find(">a&lt;b&gt;&amp;&quot;c&quot;?: p=2") != std::string::npos);
  CHECK(xml_structure_error(svg) == "");
}
