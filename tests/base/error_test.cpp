// base/error: the located message of a user error, and the did-you-mean helper.
#include "base/error.h"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

using ppsim::closest_name;
using ppsim::Error;

TEST_CASE("Error prefixes file, line and field to the sentence") {
  const Error full("run.toml", 12, "pipeline.microbatches", "must be at least 1");
  CHECK(std::string(full.what()) ==
        "run.toml:12: field 'pipeline.microbatches': must be at least 1");
  CHECK(full.file() == "run.toml");
  CHECK(full.line() == 12);
  CHECK(full.field() == "pipeline.microbatches");
  CHECK(full.sentence() == "must be at least 1");
}

TEST_CASE("Error leaves out the parts that do not apply") {
  CHECK(std::string(Error("run.toml", 0, "", "cannot open").what()) == "run.toml: cannot open");
  CHECK(std::string(Error("run.toml", 0, "-m", "too big").what()) ==
        "run.toml: field '-m': too big");
  CHECK(std::string(Error("", 0, "-m", "must be positive").what()) ==
        "field '-m': must be positive");
  // A line without a file is not printed: there is nothing to attach it to.
  CHECK(std::string(Error("", 7, "", "bare").what()) == "bare");
  CHECK(std::string(Error("run.toml", -1, "", "negative line").what()) ==
        "run.toml: negative line");
  const Error plain("p must be even");
  CHECK(std::string(plain.what()) == "p must be even");
  CHECK(plain.sentence() == "p must be even");
  CHECK(plain.file().empty());
  CHECK(plain.line() == 0);
  CHECK(plain.field().empty());
}

TEST_CASE("Error is a runtime_error, caught by the CLI's handler") {
  CHECK_THROWS_AS(throw Error("x"), std::runtime_error);
  CHECK_THROWS_WITH_AS(throw Error("a.csv", 3, "", "bad row"), "a.csv:3: bad row", Error);
}

TEST_CASE("closest_name returns the nearest candidate within the edit-distance threshold") {
  const std::vector<std::string> names{"gpipe", "1f1b", "1f1b-split", "zb-h1", "zb-h2", "hanayo"};
  CHECK(closest_name("gpipe", names) == "gpipe");   // exact
  CHECK(closest_name("gpip", names) == "gpipe");    // deletion
  CHECK(closest_name("gpipee", names) == "gpipe");  // insertion
  CHECK(closest_name("1f2b", names) == "1f1b");     // substitution
  CHECK(closest_name("hanyao", names) == "hanayo"); // a swap costs two
  CHECK(closest_name("1f1b-splt", names) == "1f1b-split");
  CHECK(closest_name("zb-h3", names) == "zb-h1"); // ties keep the first listed
  CHECK(closest_name("transformer", names).empty());
  CHECK(closest_name("gpipe", {}).empty());
}

TEST_CASE("closest_name allows max(2, n/3) edits for a name of n characters") {
  // Short names: 2 edits allowed, 3 not.
  CHECK(closest_name("ab", {"xy"}) == "xy");
  CHECK(closest_name("abc", {"xyz"}).empty());
  CHECK(closest_name("abcdef", {"abcdxy"}) == "abcdxy");
  CHECK(closest_name("abcdef", {"abcxyz"}).empty());
  // Twelve characters: 4 edits allowed, 5 not.
  CHECK(closest_name("abcdefghijkl", {"abcdefghwxyz"}) == "abcdefghwxyz");
  CHECK(closest_name("abcdefghijkl", {"abcdefgvwxyz"}).empty());
  // The threshold follows the typed name, not the candidate.
  CHECK(closest_name("", {"ab"}) == "ab");
  CHECK(closest_name("", {"abc"}).empty());
  // The nearest wins over an earlier, farther one.
  CHECK(closest_name("abcdefghijkl", {"abcdefghwxyz", "abcdefghijkx"}) == "abcdefghijkx");
}

TEST_CASE("unknown_name shows a long name cut, with its length, and compares it cheaply") {
  // A 2 MB key once took minutes of edit distances and was echoed whole: a name past 256
  // characters is compared with nothing, and the message shows its first 80.
  const std::string key(2'000'000, 'k');
  CHECK(ppsim::unknown_name("field", key, {"model.F", std::string(2'000'001, 'k')}) ==
        "unknown field '" + std::string(80, 'k') + "... (2000000 characters)'");
  CHECK(closest_name(std::string(257, 'a'), {std::string(257, 'a')}).empty());
  CHECK(closest_name(std::string(256, 'a'), {std::string(256, 'a')}) == std::string(256, 'a'));
  // Candidates farther in length than the allowed edits are skipped, the result is unchanged.
  CHECK(closest_name("model.G", {"model.Fxxxxxxxxxxx", "model.F"}) == "model.F");
  CHECK(ppsim::unknown_name("field", "model.G", {"model.F"}) ==
        "unknown field 'model.G', did you mean 'model.F'?");
}
