#pragma once
// A JSON value of an input as an error message shows it (docs/reliability.md, "Limits"): a
// number, a boolean or null as written, a string quoted and cut at 80 characters, an array or an
// object by its kind only, so that no message serialises a whole (perhaps deeply nested) value.
#include <nlohmann/json.hpp>

#include <string>

namespace ppsim {

inline std::string shown_json(const nlohmann::json &value) {
  constexpr std::size_t kShownLength = 80;
  if (value.is_array())
    return "an array";
  if (value.is_object())
    return "an object";
  std::string text = value.dump();
  if (text.size() > kShownLength)
    text = text.substr(0, kShownLength) + "...";
  return text;
}

} // namespace ppsim
