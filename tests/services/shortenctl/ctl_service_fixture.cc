#include "tests/services/shortenctl/ctl_service_fixture.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"

namespace shortener::testing {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

CtlServiceFixture& Shared() {
  static CtlServiceFixture fixture;
  return fixture;
}

std::string Row(const std::string& output, const std::string& label) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    const std::string prefix = "  " + label + " ";
    if (absl::StartsWith(line, prefix)) {
      return std::string(absl::StripLeadingAsciiWhitespace(line.substr(prefix.size())));
    }
  }
  return "";
}

CreatedKey CreateKey(CtlServiceFixture& f, const std::string& name, const std::string& scopes) {
  Outcome created = f.Run({"keys", "create", "--name=" + name, "--scopes=" + scopes});
  INFO(created.output);
  REQUIRE(created.exit_code == 0);
  CreatedKey result;
  result.file = f.Path(name + ".key");
  std::filesystem::copy_file(f.stdout_path(), result.file);
  // As `(umask 077; shortenctl keys create ... > FILE)` makes it: a key file
  // others can read is warned about on every use.
  std::filesystem::permissions(
      result.file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  result.key = std::string(absl::StripTrailingAsciiWhitespace(created.out));
  // "api key 7 "name" created: ...": the id is the third word.
  std::vector<std::string> words = absl::StrSplit(created.err, ' ');
  REQUIRE(words.size() > 3);
  result.id = words[2];
  return result;
}

}  // namespace shortener::testing
