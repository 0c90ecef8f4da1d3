// The fuzz targets' seed corpus (tests/fuzz/corpus/<reader>/), the reproducers of issue 32
// among them, replayed through the same readers in every build: each input is read or refused
// with ppsim's one-line error, and a refusal names the input and stays one line.
#include "base/error.h"
#include "base/text_file.h"
#include "tests/fuzz/readers.h"

#include <doctest/doctest.h>
#include <filesystem>

namespace ppsim::fuzz {

TEST_CASE("every seed of every reader is read or refused in one line") {
  const std::filesystem::path corpus = PPSIM_SOURCE_DIR "/tests/fuzz/corpus";
  for (const std::string &reader : reader_names()) {
    std::size_t seeds = 0;
    REQUIRE(std::filesystem::is_directory(corpus / reader));
    for (const auto &entry : std::filesystem::directory_iterator(corpus / reader)) {
      const std::string text = read_text_file(entry.path().string(), "seed");
      CAPTURE(entry.path().string());
      try {
        read_input(reader, text);
      } catch (const Error &error) {
        const std::string message = error.what();
        CHECK(message.rfind("fuzz", 0) == 0); // the input's name first
        CHECK(message.find('\n') == std::string::npos);
        CHECK(message.size() < 1000);
      }
      ++seeds;
    }
    CHECK_MESSAGE(seeds > 0, reader);
  }
}

} // namespace ppsim::fuzz
