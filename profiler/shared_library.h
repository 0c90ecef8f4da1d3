#pragma once
// A dlopen'd library (docs/profiler.md, "How measurement works": ppsim links no CUDA library; CUPTI
// and the driver are loaded at run time so the same binary runs on machines without a GPU).
#include <optional>
#include <string>

namespace ppsim::profiler {

/// An open shared library; closed on destruction. Move-only.
class SharedLibrary {
public:
  /// Opens `name` (a soname searched the usual way, or a path); nullopt and `why` on failure.
  /// `keep_loaded` (RTLD_NODELETE) is for libraries that must not be unloaded, such as CUPTI,
  /// whose threads and atexit handlers outlive any one user.
  static std::optional<SharedLibrary> open(const std::string &name, std::string &why,
                                           bool keep_loaded = false);

  SharedLibrary(SharedLibrary &&other) noexcept;
  SharedLibrary &operator=(SharedLibrary &&other) noexcept;
  SharedLibrary(const SharedLibrary &) = delete;
  SharedLibrary &operator=(const SharedLibrary &) = delete;
  ~SharedLibrary();

  /// The address of `name`, or nullptr when the library does not export it.
  [[nodiscard]] void *symbol(const char *name) const;
  /// The name it was opened with.
  [[nodiscard]] const std::string &name() const { return name_; }

private:
  SharedLibrary(void *handle, std::string name) : handle_(handle), name_(std::move(name)) {}
  void *handle_ = nullptr;
  std::string name_;
};

} // namespace ppsim::profiler
