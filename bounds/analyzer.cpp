// compute_bounds: collects the bounds of lower_bounds.h that apply to the backward form.
#include "bounds/analyzer.h"

#include "bounds/closed_forms.h"

#include <algorithm>

namespace ppsim {

BoundsOptions bounds_options_for(const ScheduleInfo &schedule, int group_size) {
  return BoundsOptions{schedule.split_backward ? BackwardForm::split : BackwardForm::full,
                       schedule.name, group_size};
}

std::optional<Ticks> BoundsReport::find(const std::string &name) const {
  for (const NamedBound &bound : lower_bounds)
    if (bound.name == name)
      return bound.value;
  return std::nullopt;
}

BoundsReport compute_bounds(const Scenario &given, const BoundsOptions &options) {
  // The byte model's engine checks the byte budget only: a count cap K beside it binds no
  // schedule, so a bound that took it would exceed schedules that run (a negative gap).
  std::optional<Scenario> uncapped;
  if (given.memory_model == MemoryModel::bytes && given.activations.cap) {
    uncapped = given;
    uncapped->activations.cap.reset();
  }
  const Scenario &scenario = uncapped ? *uncapped : given;
  BoundsReport report;
  const BackwardForm form = options.backward;
  report.backward = form;
  report.lower_bounds.push_back({"LB0", lb0_chain(scenario, form), true});
  report.lower_bounds.push_back({"LB1", lb1_device_path(scenario, form), true});
  report.lb2_integer_scan = lb2_is_integer_scan(scenario);
  if (const std::optional<Ticks> lb2 = lb2_memory_time(scenario, form))
    report.lower_bounds.push_back({"LB2", *lb2, true});
  else
    report.cap_fits_one_activation = false;
  if (form == BackwardForm::split) {
    report.lower_bounds.push_back({"LB3", lb3_split_backward(scenario), true});
    if (const std::optional<Ticks> lb3_mem = lb3_memory_time(scenario))
      report.lower_bounds.push_back({"LB3_mem", *lb3_mem, true});
  }
  if (const std::optional<Ticks> lb4 = lb4_warmup(scenario, form))
    report.lower_bounds.push_back({"LB4", *lb4, true});
  if (const std::optional<Ticks> span = span_lower_bound(scenario, form))
    report.lower_bounds.push_back({"span_LB", *span, false});
  for (const NamedBound &bound : report.lower_bounds)
    if (bound.bounds_makespan)
      report.best_lower_bound = std::max(report.best_lower_bound, bound.value);
  if (!options.schedule.empty())
    report.closed_form = closed_form_makespan(scenario, options.schedule, options.group_size);
  return report;
}

double gap_to_bound(Ticks makespan, Ticks lower_bound) {
  if (lower_bound == Ticks{0})
    return 0.0;
  return static_cast<double>(makespan.count()) / static_cast<double>(lower_bound.count()) - 1.0;
}

double makespan_gap(Ticks makespan, const BoundsReport &report) {
  return gap_to_bound(makespan, report.best_lower_bound);
}

} // namespace ppsim
