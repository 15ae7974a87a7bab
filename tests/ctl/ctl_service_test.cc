// shortenctl against the real shorten-service on a private PostgreSQL
// cluster: every command, in human and JSON form, and the service's errors as
// shortenctl reports them.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/service_process.h"
#include "tests/support/subprocess.h"

namespace shortener::testing {
namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// One cluster and one service for the whole file: every test uses URLs and
// aliases of its own.
class CtlServiceFixture {
 public:
  CtlServiceFixture() {
    char dir_template[] = "/tmp/ctl_service_test.XXXXXX";
    REQUIRE(mkdtemp(dir_template) != nullptr);
    dir_ = dir_template;
    auto cluster = PgCluster::Start();
    if (!cluster.ok()) FAIL(cluster.status().ToString());
    cluster_ = *std::move(cluster);
    ServiceProcessOptions options;
    options.conninfo = cluster_->ConnInfo();
    options.base_url = "https://sho.rt/";
    auto service = ServiceProcess::Start(options);
    if (!service.ok()) FAIL(service.status().ToString());
    service_ = *std::move(service);
  }
  ~CtlServiceFixture() {
    // ServiceProcess leaves its temp dir (secret, log) behind: remove it too.
    const std::filesystem::path service_dir =
        std::filesystem::path(service_->log_path()).parent_path();
    service_.reset();
    cluster_.reset();
    std::filesystem::remove_all(service_dir);
    std::filesystem::remove_all(dir_);
  }

  // Runs shortenctl --service=<the service> args..., with `input` as a file
  // named by "@input" in args.
  Outcome Run(std::vector<std::string> args, const std::string& input = "") {
    const std::string out_path = dir_ + "/out";
    const std::string in_path = dir_ + "/in";
    std::filesystem::remove(out_path);
    std::ofstream(in_path) << input;
    for (std::string& a : args) {
      if (a == "@input") a = in_path;
    }
    std::vector<std::string> argv = {BinaryPath("shortenctl"), "--service=" + service_->target()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto child = Subprocess::Spawn(argv, out_path);
    REQUIRE(child.ok());
    std::optional<int> code = child->Wait(absl::Seconds(20));
    REQUIRE(code.has_value());
    std::ifstream in(out_path);
    std::stringstream text;
    text << in.rdbuf();
    return {*code, text.str()};
  }

 private:
  std::string dir_;
  std::unique_ptr<PgCluster> cluster_;
  std::unique_ptr<ServiceProcess> service_;
};

// Destroyed at normal exit, which stops the service and the cluster.
CtlServiceFixture& Shared() {
  static CtlServiceFixture fixture;
  return fixture;
}

// The value of row `label` in shortenctl's human output ("  code     abc").
std::string Row(const std::string& output, const std::string& label) {
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    const std::string prefix = "  " + label + " ";
    if (absl::StartsWith(line, prefix)) {
      return std::string(absl::StripLeadingAsciiWhitespace(line.substr(prefix.size())));
    }
  }
  return "";
}

TEST_CASE("shortenctl shorten, resolve, get, revoke against the real service", "[ctl][pg]") {
  CtlServiceFixture& f = Shared();
  Outcome shortened = f.Run({"shorten", "https://example.com/ctl-1"});
  INFO(shortened.output);
  REQUIRE(shortened.exit_code == 0);
  const std::string code = Row(shortened.output, "code");
  REQUIRE(code.size() == 7);
  CHECK(absl::StartsWith(shortened.output, "https://sho.rt/" + code + "\n"));
  CHECK(Row(shortened.output, "created") == "yes");
  CHECK(Row(shortened.output, "expires") == "never");

  Outcome again = f.Run({"shorten", "https://example.com/ctl-1"});
  CHECK(again.exit_code == 0);
  CHECK(Row(again.output, "code") == code);
  CHECK(Row(again.output, "created") == "no");

  Outcome resolved = f.Run({"resolve", code});
  CHECK(resolved.exit_code == 0);
  CHECK(Row(resolved.output, "state") == "ACTIVE");
  CHECK(Row(resolved.output, "long_url") == "https://example.com/ctl-1");
  CHECK(Row(resolved.output, "redirect") == "302");

  Outcome got = f.Run({"get", code});
  CHECK(got.exit_code == 0);
  CHECK(Row(got.output, "owner") == "anonymous");
  CHECK(absl::EndsWith(Row(got.output, "created"), "Z"));

  Outcome revoked = f.Run({"revoke", code});
  CHECK(revoked.exit_code == 0);
  CHECK(Row(revoked.output, "state") == "REVOKED");
  CHECK(absl::EndsWith(Row(revoked.output, "revoked"), "Z"));
  Outcome after = f.Run({"--json", "resolve", code});
  CHECK(after.exit_code == 0);
  CHECK(absl::StrContains(after.output, "\"state\":\"LINK_STATE_REVOKED\""));
}

TEST_CASE("shortenctl shorten passes alias, expiry and redirect type", "[ctl][pg]") {
  CtlServiceFixture& f = Shared();
  Outcome out = f.Run({"shorten", "https://example.com/ctl-2", "--alias=ctl_sale",
                       "--expire=2099-01-01T00:00:00Z", "--redirect=308", "--json"});
  INFO(out.output);
  REQUIRE(out.exit_code == 0);
  CHECK(absl::StrContains(out.output, "\"code\":\"ctl_sale\""));
  CHECK(absl::StrContains(out.output, "\"expire_time\":\"2099-01-01T00:00:00Z\""));
  CHECK(absl::StrContains(out.output, "\"redirect_type\":\"REDIRECT_TYPE_PERMANENT\""));

  Outcome taken = f.Run({"shorten", "https://example.com/ctl-3", "--alias=ctl_sale"});
  CHECK(taken.exit_code == 1);
  CHECK(absl::StartsWith(taken.output, "shortenctl: ALREADY_EXISTS: "));

  Outcome resolved = f.Run({"resolve", "ctl_sale"});
  CHECK(Row(resolved.output, "redirect") == "308");
  CHECK(Row(resolved.output, "expires") == "2099-01-01T00:00:00Z");
}

TEST_CASE("shortenctl reports the service's errors with exit 1", "[ctl][pg]") {
  CtlServiceFixture& f = Shared();
  Outcome bad_url = f.Run({"shorten", "javascript:alert(1)"});
  CHECK(bad_url.exit_code == 1);
  CHECK(absl::StartsWith(bad_url.output, "shortenctl: INVALID_ARGUMENT: "));
  Outcome missing = f.Run({"get", "no-such-alias"});
  CHECK(missing.exit_code == 1);
  CHECK(absl::StartsWith(missing.output, "shortenctl: NOT_FOUND: "));
}

TEST_CASE("shortenctl batch shortens a file, one line per URL", "[ctl][pg]") {
  CtlServiceFixture& f = Shared();
  Outcome out = f.Run({"batch", "@input"},
                      "https://example.com/b1\nftp://example.com/b2\n\nhttps://example.com/b3\n");
  INFO(out.output);
  CHECK(out.exit_code == 1);  // one URL refused
  std::vector<std::string> lines = absl::StrSplit(out.output, '\n', absl::SkipEmpty());
  REQUIRE(lines.size() == 4);  // 3 results, then the summary on stderr
  CHECK(absl::StartsWith(lines[0], "https://sho.rt/"));
  CHECK(absl::EndsWith(lines[0], "\thttps://example.com/b1"));
  CHECK(absl::StartsWith(lines[1], "error: INVALID_ARGUMENT: "));
  CHECK(absl::EndsWith(lines[2], "\thttps://example.com/b3"));
  CHECK(lines[3] == "shortenctl: 1 of 3 URLs failed");
}

}  // namespace
}  // namespace shortener::testing
