#pragma once
// Ids are small dense non-negative integers (device, stage, microbatch, op index) and enums,
// kept as int (docs/architecture.md); containers index by std::size_t. This is the one
// conversion, named.
#include <concepts>
#include <cstddef>
#include <type_traits>

namespace ppsim {

/// `id` as a container index.
template <class Id>
  requires std::integral<Id> || std::is_enum_v<Id>
constexpr std::size_t at(Id id) {
  return static_cast<std::size_t>(id);
}

} // namespace ppsim
