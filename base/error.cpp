#include "base/error.h"

#include <algorithm>
#include <fmt/format.h>

namespace ppsim {
namespace {

std::string located(const std::string &file, int line, const std::string &field,
                    const std::string &sentence) {
  std::string text;
  if (!file.empty()) {
    text += line > 0 ? fmt::format("{}:{}: ", file, line) : fmt::format("{}: ", file);
  }
  if (!field.empty()) {
    text += fmt::format("field '{}': ", field);
  }
  return text + sentence;
}

std::size_t edit_distance(const std::string &a, const std::string &b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

} // namespace

Error::Error(std::string file, int line, std::string field, const std::string &sentence)
    : std::runtime_error(located(file, line, field, sentence)), file_(std::move(file)), line_(line),
      field_(std::move(field)), sentence_(sentence) {}

std::string closest_name(const std::string &name, const std::vector<std::string> &candidates) {
  // No registry name is this long: a longer one is a mistake of another kind, not a typo.
  constexpr std::size_t kLongestComparedName = 256;
  std::string best;
  if (name.size() > kLongestComparedName)
    return best;
  std::size_t best_distance = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const std::string &candidate : candidates) {
    // The distance is at least the difference in length: a name far longer than every
    // candidate (a 2 MB key) costs no quadratic comparison.
    const std::size_t shorter = std::min(name.size(), candidate.size());
    if (std::max(name.size(), candidate.size()) - shorter >= best_distance)
      continue;
    const std::size_t distance = edit_distance(name, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

} // namespace ppsim

#include "base/assert.h"

namespace ppsim {

void fail_invariant(const char *condition, const char *file, int line) {
  throw InternalError(
      fmt::format("internal invariant '{}' failed at {}:{}", condition, file, line));
}

std::string cut_for_message(std::string_view text) {
  constexpr std::size_t kShownLength = 80;
  if (text.size() <= kShownLength)
    return std::string(text);
  return fmt::format("{}... ({} characters)", text.substr(0, kShownLength), text.size());
}

std::string unknown_name(std::string_view what, const std::string &name,
                         const std::vector<std::string> &candidates, std::string_view otherwise) {
  const std::string suggestion = closest_name(name, candidates);
  const std::string shown = cut_for_message(name);
  if (suggestion.empty())
    return fmt::format("unknown {} '{}'{}", what, shown, otherwise);
  return fmt::format("unknown {} '{}', did you mean '{}'?", what, shown, suggestion);
}

} // namespace ppsim
