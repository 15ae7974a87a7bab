// End-to-end URL policy: the real shorten-service with a deny list file,
// reloaded on SIGHUP and when the file changes, allowed schemes, and its own
// short domain refused; bad policy flags and files stop the start. Calls go
// through the fixture's stub so that they carry whatever credentials the
// fixture gives them.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/services/shorten/e2e/e2e_fixture.h"
#include "tests/support/subprocess.h"

namespace shortener::testing {
namespace {

// A private directory for the deny list file, removed at the end.
class PolicyDir {
 public:
  PolicyDir() {
    char templ[] = "/tmp/shortener-policy-XXXXXX";
    REQUIRE(mkdtemp(templ) != nullptr);
    path_ = templ;
  }
  ~PolicyDir() { std::system(absl::StrCat("rm -rf '", path_, "'").c_str()); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  REQUIRE(out.good());
}

// How operators (and config management) should update the file: write a new
// one and rename it over the old, so that no reader sees half a file.
void ReplaceFile(const std::string& path, const std::string& text) {
  WriteFile(path + ".tmp", text);
  REQUIRE(std::rename((path + ".tmp").c_str(), path.c_str()) == 0);
}

// Polls `condition` until it holds or `timeout` passes; returns how long it
// took, or nullopt.
std::optional<absl::Duration> WaitUntil(const std::function<bool()>& condition,
                                        absl::Duration timeout) {
  const absl::Time start = absl::Now();
  while (absl::Now() - start < timeout) {
    if (condition()) return absl::Now() - start;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return std::nullopt;
}

bool IsDenied(E2eFixture& f, const std::string& url) {
  v1::ShortenResponse out;
  return f.Shorten(url, &out).error_code() == grpc::StatusCode::INVALID_ARGUMENT;
}

bool LogContains(E2eFixture& f, const std::string& text) {
  return f.service->Log().find(text) != std::string::npos;
}

TEST_CASE("The deny list file is reloaded on SIGHUP and when it changes",
          "[services/shorten/e2e][e2e]") {
  PolicyDir dir;
  const std::string deny = dir.File("denied.txt");
  WriteFile(deny, "# refused long-URL hosts\nalready.example\n");
  E2eFixture f({"--denied_domains_file=" + deny, "--denied_domains=flag.example"});
  CHECK(LogContains(f, "deny list: 2 domain(s) in effect (1 from " + deny + ", loaded at start)"));

  v1::ShortenResponse out;
  REQUIRE(f.Shorten("https://phish.example/login", &out).ok());
  grpc::Status st = f.Shorten("https://already.example/", &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(IsDenied(f, "https://flag.example/"));

  SECTION("SIGHUP applies the new list at once") {
    ReplaceFile(deny, "already.example\nphish.example   # reported today\n");
    REQUIRE(f.service->process().Signal(SIGHUP));
    REQUIRE(WaitUntil([&] { return LogContains(f, "reloaded: SIGHUP"); }, absl::Seconds(10)));
    CHECK(LogContains(f, "deny list: 3 domain(s) in effect (2 from " + deny));
    st = f.Shorten("https://phish.example/login", &out);
    CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(st.error_message() == R"(long_url: host "phish.example" is on the deny list)");
    st = f.Shorten("https://Login.Phish.Example./x", &out);
    CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(
        st.error_message() ==
        R"(long_url: host "login.phish.example" is on the deny list (a subdomain of "phish.example"))");
    CHECK(IsDenied(f, "https://flag.example/"));
    CHECK_FALSE(IsDenied(f, "https://notphish.example/"));

    // A malformed file on SIGHUP: the list in effect stays, a warning names
    // the file and line.
    ReplaceFile(deny, "phish.example\nhttps://bad.example/\n");
    REQUIRE(f.service->process().Signal(SIGHUP));
    REQUIRE(WaitUntil([&] { return LogContains(f, deny + ":2: "); }, absl::Seconds(10)));
    CHECK(LogContains(f, "keeping the previous 3 domain(s)"));
    CHECK(IsDenied(f, "https://already.example/"));
    CHECK(IsDenied(f, "https://phish.example/"));
  }

  SECTION("a change of the file applies within about two seconds without a signal") {
    ReplaceFile(deny, "other.example\n");
    std::optional<absl::Duration> took =
        WaitUntil([&] { return IsDenied(f, "https://www.other.example/"); }, absl::Seconds(10));
    REQUIRE(took.has_value());
    INFO("applied after " << absl::FormatDuration(*took));
    CHECK(*took < absl::Seconds(3));
    CHECK(LogContains(f, "reloaded: the file changed"));
    CHECK_FALSE(IsDenied(f, "https://already.example/"));  // gone from the file
    CHECK(IsDenied(f, "https://flag.example/"));           // the flag's entry stays

    // Deleted: the previous list stays (never an empty one), with a warning.
    REQUIRE(unlink(deny.c_str()) == 0);
    REQUIRE(WaitUntil([&] { return LogContains(f, deny + ": No such file or directory"); },
                      absl::Seconds(10)));
    CHECK(IsDenied(f, "https://other.example/"));
    // Back, rewritten in place this time.
    WriteFile(deny, "third.example\n");
    CHECK(WaitUntil([&] { return IsDenied(f, "https://third.example/"); }, absl::Seconds(10)));
    CHECK_FALSE(IsDenied(f, "https://other.example/"));
  }
}

TEST_CASE("Schemes outside the allowed list and our own short domain are refused",
          "[services/shorten/e2e][e2e]") {
  E2eFixture f;  // base_url https://sho.rt/, default schemes
  v1::ShortenResponse out;
  grpc::Status st = f.Shorten("ftp://files.example/report.pdf", &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == R"(long_url: scheme "ftp" is not allowed (allowed: http, https))");
  st = f.Shorten("https://sho.rt/abcdefg", &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == R"(long_url: host "sho.rt" is one of our own short domains)");
  st = f.Shorten("http://WWW.sho.rt/x", &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(st.error_message(), Catch::Contains("one of our own short domains"));
  CHECK(f.Shorten("https://example.com/fine", &out).ok());
}

TEST_CASE("The allowed_schemes flag replaces the default schemes", "[services/shorten/e2e][e2e]") {
  E2eFixture f({"--allowed_schemes=HTTP"});
  v1::ShortenResponse out;
  grpc::Status st = f.Shorten("https://example.com/secure", &out);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(st.error_message() == R"(long_url: scheme "https" is not allowed (allowed: http))");
  CHECK(f.Shorten("http://example.com/plain", &out).ok());
}

// Starts the service with `flags` (the database is never reached: these
// fail before it) and returns its exit code and log.
std::pair<int, std::string> RunFailingService(const std::vector<std::string>& flags,
                                              const PolicyDir& dir) {
  std::vector<std::string> argv = {BinaryPath("shorten-service"), "--postgres=host=/nonexistent",
                                   "--codec_secret_file=" + dir.File("secret"),
                                   "--create_codec_secret", "--db_startup_timeout=1s"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  const std::string log_path = dir.File("service.log");
  std::remove(log_path.c_str());
  auto process = Subprocess::Spawn(argv, log_path);
  REQUIRE(process.ok());
  std::optional<int> rc = process->Wait(absl::Seconds(20));
  REQUIRE(rc.has_value());
  std::ifstream in(log_path);
  std::stringstream text;
  text << in.rdbuf();
  return {*rc, text.str()};
}

// Hostile long URLs a public shortener must refuse: hosts on this machine or
// the clicker's own network in the spellings libcurl reads, and hosts that
// are no RFC 1123 host names. Each answer names the host (and, for private
// targets, the flag).
const std::vector<std::pair<std::string, std::string>>& HostileHosts() {
  static const auto* const kHosts = new std::vector<std::pair<std::string, std::string>>{
      {"http://127.0.0.1/", R"(host "127.0.0.1" is a loopback address)"},
      {"http://2130706433/", R"(host "127.0.0.1" is a loopback address)"},
      {"http://0x7f.1/", R"(host "127.0.0.1" is a loopback address)"},
      {"http://017700000001/", R"(host "127.0.0.1" is a loopback address)"},
      {"http://[::1]:8080/", R"(host "[::1]" is a loopback address)"},
      {"http://[::ffff:127.0.0.1]/", R"(host "[::ffff:127.0.0.1]" is a loopback address)"},
      {"http://[::ffff:a9fe:a9fe]/latest/meta-data/",
       R"(host "[::ffff:169.254.169.254]" is a link-local address)"},
      {"http://169.254.169.254/latest/meta-data/", R"(host "169.254.169.254" is a link-local)"},
      {"http://10.0.0.1/", R"(host "10.0.0.1" is a private address (RFC 1918))"},
      {"http://0300.0250.0.1/", R"(host "192.168.0.1" is a private address)"},
      {"http://[fd00::1]/", R"(host "[fd00::1]" is a unique local address)"},
      {"http://[fe80::1]/", R"(host "[fe80::1]" is a link-local address)"},
      {"http://0.0.0.0:8080/", R"(host "0.0.0.0" is an unspecified address)"},
      {"http://localhost:3000/", R"(host "localhost" is a name of the machine)"},
      {"http://admin.localhost/", R"(host "admin.localhost" is a name of the machine)"},
      {"http://metadata.google.internal/", R"(host "metadata.google.internal" is a name)"},
      {"http://intranet/", R"(host "intranet" is a name of one label)"},
      {"http://_dmarc.example.com/", R"(bad character in "_dmarc")"},
      {"http://-phish.example.com/", R"(label "-phish" starts or ends with a hyphen)"},
      {"http://ab--cd.example.com/", "reserved for internationalised names"},
      {"http://xn--zz.example.com/", "not a valid internationalised domain name"},
      {"http://example.123/", "not a valid IPv4 address"},
  };
  return *kHosts;
}

TEST_CASE("Shorten refuses private targets and hosts that are no host names",
          "[services/shorten/e2e][e2e]") {
  E2eFixture f;
  for (const auto& [url, problem] : HostileHosts()) {
    INFO(url);
    v1::ShortenResponse out;
    const grpc::Status st = f.Shorten(url, &out);
    CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(st.error_message(), Catch::StartsWith("long_url: "));
    CHECK_THAT(st.error_message(), Catch::Contains(problem));
    if (absl::StrContains(problem, "host \"")) {
      CHECK_THAT(st.error_message(), Catch::Contains("--allow_private_targets"));
    }
  }
  // In a batch, each refused on its own.
  v1::BatchShortenRequest batch;
  batch.add_requests()->set_long_url("https://example.com/public");
  batch.add_requests()->set_long_url("http://2130706433/admin");
  v1::BatchShortenResponse results;
  REQUIRE(f.stub->BatchShorten(E2eFixture::Ctx().get(), batch, &results).ok());
  REQUIRE(results.results_size() == 2);
  CHECK(results.results(0).has_response());
  REQUIRE(results.results(1).has_error());
  CHECK_THAT(results.results(1).error().message(), Catch::Contains("loopback"));
}

TEST_CASE("With --allow_private_targets private hosts are shortened but bad names are not",
          "[services/shorten/e2e][e2e]") {
  E2eFixture f({"--allow_private_targets"});
  for (const auto& [url, problem] : HostileHosts()) {
    INFO(url);
    v1::ShortenResponse out;
    const grpc::Status st = f.Shorten(url, &out);
    if (absl::StrContains(problem, "host \"")) {
      CHECK(st.ok());  // an intranet shortener may point there
    } else {
      CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    }
  }
  v1::ShortenResponse loopback;
  REQUIRE(f.Shorten("http://0x7f.1:8080/x", &loopback).ok());
  CHECK(loopback.link().long_url() == "http://127.0.0.1:8080/x");
}

TEST_CASE("Bad URL policy flags or a malformed deny list file stop the start",
          "[services/shorten/e2e][e2e]") {
  PolicyDir dir;
  auto [rc, log] = RunFailingService({"--allowed_schemes=https,ftp:"}, dir);
  CHECK(rc == 1);
  CHECK_THAT(log, Catch::Contains(R"(--allowed_schemes: scheme "ftp:" is not a scheme name)"));

  auto [rc2, log2] = RunFailingService({"--denied_domains=ok.example,*.bad.example"}, dir);
  CHECK(rc2 == 1);
  CHECK_THAT(log2, Catch::Contains(R"(--denied_domains: "*.bad.example" is not a domain name)"));

  const std::string deny = dir.File("denied.txt");
  WriteFile(deny, "# comment\nok.example\n\nbad example\n");
  auto [rc3, log3] = RunFailingService({"--denied_domains_file=" + deny}, dir);
  CHECK(rc3 == 1);
  CHECK_THAT(log3, Catch::Contains("--denied_domains_file: " + deny + ":4: one domain per line"));

  auto [rc4, log4] = RunFailingService({"--denied_domains_file=" + dir.File("missing.txt")}, dir);
  CHECK(rc4 == 1);
  CHECK_THAT(log4, Catch::Contains(dir.File("missing.txt") + ": No such file or directory"));

  auto [rc5, help] = RunFailingService({"--help"}, dir);
  CHECK(rc5 != 0);
  CHECK_THAT(help, Catch::Contains("--allowed_schemes") && Catch::Contains("default: http,https"));
  CHECK_THAT(help, Catch::Contains("--denied_domains_file") && Catch::Contains("SIGHUP"));
}

}  // namespace
}  // namespace shortener::testing
