#include "profiler/shared_library.h"

#include <dlfcn.h>
#include <utility>

namespace ppsim::profiler {

std::optional<SharedLibrary> SharedLibrary::open(const std::string &name, std::string &why,
                                                 bool keep_loaded) {
  // RTLD_LOCAL: CUPTI's symbols must not interpose on a profiled program's own.
  void *handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | (keep_loaded ? RTLD_NODELETE : 0));
  if (handle == nullptr) {
    const char *error = ::dlerror();
    why = error != nullptr ? error : "unknown dlopen error";
    return std::nullopt;
  }
  return SharedLibrary(handle, name);
}

SharedLibrary::SharedLibrary(SharedLibrary &&other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), name_(std::move(other.name_)) {}

SharedLibrary &SharedLibrary::operator=(SharedLibrary &&other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr)
      ::dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    name_ = std::move(other.name_);
  }
  return *this;
}

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr)
    ::dlclose(handle_);
}

void *SharedLibrary::symbol(const char *name) const {
  return handle_ == nullptr ? nullptr : ::dlsym(handle_, name);
}

} // namespace ppsim::profiler
