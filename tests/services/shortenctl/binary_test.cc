// The shortenctl binary itself: exit codes, a quick, clear UNAVAILABLE
// when nothing listens at --service, and where it takes the API key from.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/support/subprocess.h"

namespace shortener::ctl {
namespace {

using ::shortener::testing::BinaryPath;
using ::shortener::testing::PickUnusedPort;
using ::shortener::testing::Subprocess;

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
  absl::Duration elapsed;
};

// Runs shortenctl with `args`; fails the test if it takes over 10 s.
Outcome RunShortenctl(const std::vector<std::string>& args) {
  char dir_template[] = "/tmp/ctl_test.XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  const std::string log = dir + "/shortenctl.out";
  std::vector<std::string> argv = {BinaryPath("shortenctl")};
  argv.insert(argv.end(), args.begin(), args.end());
  Outcome outcome;
  const absl::Time start = absl::Now();
  absl::StatusOr<Subprocess> child = Subprocess::Spawn(argv, log);
  REQUIRE(child.ok());
  std::optional<int> code = child->Wait(absl::Seconds(10));
  outcome.elapsed = absl::Now() - start;
  if (!code.has_value()) std::filesystem::remove_all(dir);
  REQUIRE(code.has_value());
  outcome.exit_code = *code;
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  outcome.output = text.str();
  std::filesystem::remove_all(dir);
  return outcome;
}

TEST_CASE("shortenctl against a port where nothing listens exits 1 with the hint",
          "[services/shortenctl]") {
  const std::string service = absl::StrCat("127.0.0.1:", PickUnusedPort());
  Outcome outcome = RunShortenctl({"--service=" + service, "resolve", "abc"});
  CHECK(outcome.exit_code == 1);
  CHECK(outcome.elapsed < absl::Seconds(2));
  CHECK(absl::StrContains(outcome.output, "shortenctl: UNAVAILABLE: cannot connect to " + service));
  CHECK(absl::StrContains(outcome.output, "is shorten-service running at " + service + "?"));
}

TEST_CASE("shortenctl takes the service from SHORTENER_SERVICE", "[services/shortenctl]") {
  const std::string service = absl::StrCat("127.0.0.1:", PickUnusedPort());
  setenv("SHORTENER_SERVICE", service.c_str(), 1);
  Outcome outcome = RunShortenctl({"get", "abc"});
  unsetenv("SHORTENER_SERVICE");
  CHECK(outcome.exit_code == 1);
  CHECK(absl::StrContains(outcome.output, "is shorten-service running at " + service + "?"));
}

TEST_CASE("shortenctl usage errors exit 2 with one usage line", "[services/shortenctl]") {
  Outcome unknown = RunShortenctl({"frob"});
  CHECK(unknown.exit_code == 2);
  CHECK(absl::StartsWith(unknown.output, "shortenctl: unknown command \"frob\"\nusage: "));
  CHECK(RunShortenctl({"--no_such_flag", "get", "x"}).exit_code == 2);
  CHECK(RunShortenctl({"--timeout=soon", "get", "x"}).exit_code == 2);
  CHECK(RunShortenctl({"shorten", "https://example.com/", "--expire=2027"}).exit_code == 2);
  CHECK(RunShortenctl({"shorten", "https://example.com/", "--redirect=303"}).exit_code == 2);
}

TEST_CASE("shortenctl without a command lists the commands and exits 2", "[services/shortenctl]") {
  Outcome outcome = RunShortenctl({});
  CHECK(outcome.exit_code == 2);
  CHECK(absl::StrContains(outcome.output, "resolve CODE"));
}

TEST_CASE("shortenctl --help lists the flags and exits 0", "[services/shortenctl]") {
  Outcome outcome = RunShortenctl({"--help"});
  CHECK(outcome.exit_code == 0);
  for (const char* flag : {"--service=",        "--json",
                           "--timeout=5s",      "--alias",
                           "--expire",          "--redirect",
                           "--force_new",       "--request_id",
                           "--service_tls_ca",  "--service_tls_cert",
                           "--service_tls_key", "--service_tls_server_name",
                           "--api_key_file",    "--name",
                           "--tenant",          "--scopes",
                           "--domains",         "--rate",
                           "--burst",           "keys create",
                           "keys list",         "keys revoke ID",
                           "SHORTENER_API_KEY"}) {
    CHECK(absl::StrContains(outcome.output, flag));
  }
}

TEST_CASE("shortenctl with a bad key source exits 2 naming it, and never echoes a key",
          "[services/shortenctl]") {
  Outcome missing = RunShortenctl({"--api_key_file=/nonexistent/admin.key", "keys", "list"});
  CHECK(missing.exit_code == 2);
  CHECK(absl::StartsWith(missing.output,
                         "shortenctl: --api_key_file: cannot read /nonexistent/admin.key"));
  setenv("SHORTENER_API_KEY", "shk_secret with space", 1);
  Outcome bad_env = RunShortenctl({"resolve", "abc"});
  unsetenv("SHORTENER_API_KEY");
  CHECK(bad_env.exit_code == 2);
  CHECK(absl::StartsWith(bad_env.output, "shortenctl: SHORTENER_API_KEY holds characters"));
  CHECK_FALSE(absl::StrContains(bad_env.output, "shk_secret"));
}

TEST_CASE("shortenctl keys usage errors exit 2 before connecting", "[services/shortenctl]") {
  // No --service: a usage error must not wait for a connection.
  Outcome no_scopes = RunShortenctl({"keys", "create", "--name", "edge"});
  CHECK(no_scopes.exit_code == 2);
  CHECK(absl::StartsWith(no_scopes.output,
                         "shortenctl: keys create needs --scopes (comma-separated: shorten, "));
  CHECK(absl::StrContains(no_scopes.output, "\nusage: shortenctl keys create --name=N"));
  CHECK(RunShortenctl({"keys", "revoke", "one"}).exit_code == 2);
  CHECK(RunShortenctl({"keys"}).exit_code == 2);
  CHECK(RunShortenctl({"get", "abc", "--scopes=shorten"}).exit_code == 2);
}

}  // namespace
}  // namespace shortener::ctl
