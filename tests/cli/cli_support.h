#pragma once
// Runs the built ppsim binary in a scratch folder and captures its exit code and streams.
#include <cstdlib>
#include <doctest/doctest.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace ppsim::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// A fresh folder per test; files written by commands land there.
class Scratch {
public:
  explicit Scratch(const std::string &name)
      : path_(std::filesystem::temp_directory_path() /
              fmt::format("ppsim-cli-{}-{}", name, ::getpid())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~Scratch() { std::filesystem::remove_all(path_); }
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;

  [[nodiscard]] std::string file(const std::string &name) const { return (path_ / name).string(); }
  void write(const std::string &name, const std::string &content) const {
    std::ofstream(file(name)) << content;
  }
  [[nodiscard]] std::string read(const std::string &name) const {
    std::ifstream in(file(name));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  [[nodiscard]] bool exists(const std::string &name) const {
    return std::filesystem::exists(path_ / name);
  }

  /// Runs `ppsim <arguments>` (a shell-quoted string) inside the scratch folder.
  [[nodiscard]] CommandResult ppsim(const std::string &arguments) const {
    const std::string command = fmt::format("cd '{}' && '{}' {} >stdout.txt 2>stderr.txt",
                                            path_.string(), PPSIM_BINARY, arguments);
    const int status = std::system(command.c_str());
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = read("stdout.txt");
    result.err = read("stderr.txt");
    return result;
  }

private:
  std::filesystem::path path_;
};

// Runs a shell command line inside the scratch folder; its exit status.
inline int shell(const Scratch &scratch, const std::string &command) {
  const int status = std::system(fmt::format("cd '{}' && {}", scratch.file(""), command).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Whether a user error's message is given whole or by its start (the rest names a temporary path
// or a measured amount).
enum class Match { whole, start };

inline void check_user_error(const CommandResult &result, const std::string &message,
                             Match match = Match::whole) {
  CHECK(result.exit_code == 1);
  if (match == Match::whole)
    CHECK(result.err == "ppsim: error: " + message + "\n");
  else
    CHECK(result.err.starts_with("ppsim: error: " + message));
  CHECK(result.out.empty());
}

} // namespace ppsim::testing
