// shortenctl against the real shorten-service on a private PostgreSQL
// cluster: every command, in human and JSON form, the service's errors as
// shortenctl reports them, and API keys: created, used, listed and revoked
// through shortenctl, starting from the service's bootstrap admin key.
#include <stdlib.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/status.h"
#include "tests/services/shortenctl/ctl_service_fixture.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/qr_decode.h"
#include "tests/support/service_process.h"
#include "tests/support/subprocess.h"

namespace shortener::testing {
namespace {

TEST_CASE("shortenctl shorten, resolve, get, revoke against the real service",
          "[services/shortenctl][pg][e2e]") {
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
  CHECK(Row(got.output, "owner") == "admin");  // the bootstrap admin key's tenant
  CHECK(absl::EndsWith(Row(got.output, "created"), "Z"));

  Outcome revoked = f.Run({"revoke", code});
  CHECK(revoked.exit_code == 0);
  CHECK(Row(revoked.output, "state") == "REVOKED");
  CHECK(absl::EndsWith(Row(revoked.output, "revoked"), "Z"));
  Outcome after = f.Run({"--json", "resolve", code});
  CHECK(after.exit_code == 0);
  CHECK(absl::StrContains(after.output, "\"state\":\"LINK_STATE_REVOKED\""));
}

TEST_CASE("shortenctl shorten passes alias, expiry and redirect type",
          "[services/shortenctl][pg][e2e]") {
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

TEST_CASE("shortenctl reports the service's errors with exit 1", "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  Outcome bad_url = f.Run({"shorten", "javascript:alert(1)"});
  CHECK(bad_url.exit_code == 1);
  CHECK(absl::StartsWith(bad_url.output, "shortenctl: INVALID_ARGUMENT: "));
  Outcome missing = f.Run({"get", "no-such-alias"});
  CHECK(missing.exit_code == 1);
  CHECK(absl::StartsWith(missing.output, "shortenctl: NOT_FOUND: "));
}

TEST_CASE("shortenctl batch shortens a file, one line per URL", "[services/shortenctl][pg][e2e]") {
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

TEST_CASE("shortenctl keys create prints the key alone on stdout, the note on stderr",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  Outcome created = f.Run({"keys", "create", "--name=ctl-edge",
                           "--scopes=resolve,record_clicks,watch_invalidations", "--infrastructure",
                           "--rate=50"});
  INFO(created.output);
  REQUIRE(created.exit_code == 0);
  CHECK(absl::StartsWith(created.out, "shk_"));
  CHECK(created.out.find('\n') == created.out.size() - 1);
  CHECK(absl::StrContains(created.err,
                          "\"ctl-edge\" created: infrastructure, no tenant, scopes "
                          "record_clicks,resolve,watch_invalidations, domains any, rate 50/s "
                          "burst 50; store the key now"));
  CHECK_FALSE(absl::StrContains(created.err, "shk_"));
  Outcome listed = f.Run({"keys", "list"});
  REQUIRE(listed.exit_code == 0);
  bool listed_as_infrastructure = false;
  for (absl::string_view line : absl::StrSplit(listed.out, '\n')) {
    const std::vector<absl::string_view> cells = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (cells.size() > 3 && cells[1] == "ctl-edge") {
      listed_as_infrastructure =
          cells[2] == "(infrastructure)" && cells[3] == "record_clicks,resolve,watch_invalidations";
    }
  }
  CHECK(listed_as_infrastructure);

  // The service refuses the edge's scopes on a tenant key, saying why.
  Outcome tenant_edge =
      f.Run({"keys", "create", "--name=ctl-tenant-edge", "--scopes=resolve,record_clicks"});
  CHECK(tenant_edge.exit_code == 1);
  CHECK(absl::StrContains(tenant_edge.err,
                          "INVALID_ARGUMENT: scopes: record_clicks is for infrastructure keys "
                          "only"));

  Outcome json = f.Run({"--json", "keys", "create", "--name=ctl-json", "--scopes=stats"});
  INFO(json.output);
  REQUIRE(json.exit_code == 0);
  CHECK(absl::StartsWith(json.out, "{\"key\":\"shk_"));
  CHECK(absl::StrContains(json.out, "\"name\":\"ctl-json\""));
  CHECK(json.err.empty());

  Outcome bad_scope = f.Run({"keys", "create", "--name=ctl-bad", "--scopes=fly"});
  CHECK(bad_scope.exit_code == 1);
  CHECK(absl::StartsWith(bad_scope.err, "shortenctl: INVALID_ARGUMENT: "));
}

TEST_CASE("a key from keys create shortens, but is refused what its scopes do not allow",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  CreatedKey key = CreateKey(f, "ctl-shortener", "shorten");
  const std::string with_key = "--api_key_file=" + key.file;
  Outcome shortened = f.RunWithoutKey({with_key, "shorten", "https://example.com/ctl-key"});
  INFO(shortened.output);
  REQUIRE(shortened.exit_code == 0);
  const std::string code = Row(shortened.out, "code");

  Outcome revoke = f.RunWithoutKey({with_key, "revoke", code});
  CHECK(revoke.exit_code == 1);
  CHECK(absl::StartsWith(revoke.err, "shortenctl: PERMISSION_DENIED: "));
  CHECK(absl::StrContains(revoke.err, "lacks scope \"revoke\""));

  Outcome create = f.RunWithoutKey({with_key, "keys", "create", "--name=x", "--scopes=admin"});
  CHECK(create.exit_code == 1);
  CHECK(absl::StartsWith(create.err, "shortenctl: PERMISSION_DENIED: "));
  CHECK(absl::StrContains(create.err, "lacks scope \"admin\""));
  CHECK(f.RunWithoutKey({with_key, "keys", "list"}).exit_code == 1);
  CHECK_FALSE(absl::StrContains(revoke.output + create.output, key.key));
}

TEST_CASE("shortenctl keys list shows the keys and never a secret",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  CreatedKey key = CreateKey(f, "ctl-listed", "resolve,stats");
  const std::string admin_key(absl::StripAsciiWhitespace(ReadFile(f.admin_key_file())));
  REQUIRE_FALSE(admin_key.empty());
  for (bool json : {false, true}) {
    Outcome list = f.Run({json ? "--json" : "--nojson", "keys", "list"});
    INFO(list.output);
    REQUIRE(list.exit_code == 0);
    CHECK(absl::StrContains(list.out, "ctl-listed"));
    CHECK_FALSE(absl::StrContains(list.output, key.key));
    CHECK_FALSE(absl::StrContains(list.output, admin_key));
    CHECK_FALSE(absl::StrContains(list.output, "shk_"));
  }
  Outcome table = f.Run({"keys", "list"});
  CHECK(absl::StartsWith(table.out, "ID "));
  bool found = false;
  for (absl::string_view line : absl::StrSplit(table.out, '\n')) {
    if (!absl::StrContains(line, "ctl-listed")) continue;
    found = true;
    CHECK(absl::StartsWith(line, key.id + " "));
    CHECK(absl::StrContains(line, "resolve,stats"));
    CHECK(absl::EndsWith(line, " -"));  // not revoked
  }
  CHECK(found);
}

TEST_CASE("shortenctl keys revoke: the key is refused within seconds, with the hint",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  CreatedKey key = CreateKey(f, "ctl-revoked", "resolve");
  const std::string with_key = "--api_key_file=" + key.file;
  Outcome before = f.RunWithoutKey({with_key, "resolve", "ctl-no-such-code"});
  CHECK(absl::StartsWith(before.err, "shortenctl: NOT_FOUND: "));  // authenticated

  Outcome revoked = f.Run({"keys", "revoke", key.id});
  INFO(revoked.output);
  REQUIRE(revoked.exit_code == 0);
  CHECK(absl::StartsWith(revoked.out, "api key " + key.id + " \"ctl-revoked\"\n"));
  CHECK(absl::EndsWith(Row(revoked.out, "revoked"), "Z"));

  // The service promises about a second; the deadline leaves room for slow
  // (sanitizer) builds, where every shortenctl run costs more.
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  Outcome after;
  do {
    after = f.RunWithoutKey({with_key, "resolve", "ctl-no-such-code"});
    if (after.exit_code == 1 && absl::StrContains(after.err, "UNAUTHENTICATED")) break;
    absl::SleepFor(absl::Milliseconds(100));
  } while (absl::Now() < deadline);
  INFO(after.output);
  CHECK(absl::StartsWith(after.err, "shortenctl: UNAUTHENTICATED: "));
  CHECK(absl::StrContains(after.err,
                          "\nshortenctl: pass --api_key_file=PATH or set SHORTENER_API_KEY\n"));

  Outcome again = f.Run({"--json", "keys", "revoke", key.id});
  CHECK(again.exit_code == 0);
  CHECK(absl::StrContains(again.out, "\"revoke_time\":\""));
  Outcome unknown = f.Run({"keys", "revoke", "999999"});
  CHECK(unknown.exit_code == 1);
  CHECK(absl::StartsWith(unknown.err, "shortenctl: NOT_FOUND: "));
}

TEST_CASE("shortenctl without a key is UNAUTHENTICATED and says how to pass one",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  Outcome bare = f.RunWithoutKey({"resolve", "ctl-no-such-code"});
  CHECK(bare.exit_code == 1);
  CHECK(bare.out.empty());
  CHECK(absl::StartsWith(bare.err, "shortenctl: UNAUTHENTICATED: "));
  CHECK(absl::EndsWith(bare.err,
                       "\nshortenctl: pass --api_key_file=PATH or set SHORTENER_API_KEY\n"));

  Outcome bad_file = f.RunWithoutKey({"--api_key_file=" + f.Path("missing.key"), "keys", "list"});
  CHECK(bad_file.exit_code == 2);
  CHECK(absl::StartsWith(bad_file.err, "shortenctl: --api_key_file: cannot read "));
}

TEST_CASE("shortenctl takes the key from SHORTENER_API_KEY, but --api_key_file wins",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  CreatedKey weak = CreateKey(f, "ctl-env", "resolve");
  const std::string admin_key(absl::StripAsciiWhitespace(ReadFile(f.admin_key_file())));
  setenv("SHORTENER_API_KEY", admin_key.c_str(), 1);
  Outcome from_env = f.RunWithoutKey({"keys", "list"});
  Outcome file_wins = f.RunWithoutKey({"--api_key_file=" + weak.file, "keys", "list"});
  unsetenv("SHORTENER_API_KEY");
  INFO(from_env.output << file_wins.output);
  CHECK(from_env.exit_code == 0);
  CHECK(absl::StrContains(from_env.out, "ctl-env"));
  CHECK(file_wins.exit_code == 1);
  CHECK(absl::StrContains(file_wins.err, "PERMISSION_DENIED"));
}

// Sends `clicks` as an edge would; returns how many the service accepted.
int64_t RecordClicks(CtlServiceFixture& f, const v1::RecordClicksRequest& clicks) {
  v1::RecordClicksResponse recorded;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  REQUIRE(f.service().NewStub()->RecordClicks(&ctx, clicks, &recorded).ok());
  return recorded.accepted();
}

TEST_CASE("shortenctl stats prints the click table and JSON", "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  Outcome shortened = f.Run({"shorten", "https://example.com/ctl-stats"});
  REQUIRE(shortened.exit_code == 0);
  const std::string code = Row(shortened.output, "code");
  // Three human clicks and a bot on 2030-01-01, as an edge would report them.
  v1::RecordClicksRequest clicks;
  clicks.set_batch_id("ctl-stats-1");
  const char* agents[] = {
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
      "Chrome/120.0.0.0 Safari/537.36",
      "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"};
  for (int i = 0; i < 4; ++i) {
    v1::ClickEvent* e = clicks.add_events();
    e->set_code(code);
    *e->mutable_time() =
        grpcutil::ToProtoTimestamp(absl::FromUnixSeconds(1893456000 + 3600 * (i % 2)));
    e->set_client_ip(i == 0 ? "192.0.2.1" : "192.0.2.2");
    e->set_user_agent(agents[i == 3 ? 1 : 0]);
    e->set_http_status(302);
  }
  REQUIRE(RecordClicks(f, clicks) == 4);

  Outcome hourly = f.Run({"stats", code, "--from=2030-01-01T00:00:00Z", "--to=2030-01-01T02:00:00Z",
                          "--granularity=hour"});
  INFO(hourly.output);
  REQUIRE(hourly.exit_code == 0);
  CHECK(absl::StrContains(hourly.output, code + ": clicks per hour (UTC), 2030-01-01 00:00 to "
                                                "2030-01-01 01:00\n"));
  CHECK(absl::StrContains(hourly.output, "START             HUMAN  BOTS  UNIQUE\n"));
  CHECK(absl::StrContains(hourly.output, "2030-01-01 00:00  2      0     2\n"));
  CHECK(absl::StrContains(hourly.output, "2030-01-01 01:00  1      1     1\n"));
  CHECK(absl::StrContains(hourly.output, "total             3      1     2\n"));
  CHECK(absl::StrContains(hourly.output, "top browsers  Chrome 3\n"));

  Outcome json = f.Run({"--json", "stats", code, "--from=2030-01-01", "--to=2030-01-02"});
  INFO(json.output);
  REQUIRE(json.exit_code == 0);
  CHECK(absl::StrContains(json.output, "\"total_human_clicks\":\"3\""));
  CHECK(absl::StrContains(json.output, "\"total_bot_clicks\":\"1\""));

  Outcome get = f.Run({"get", code});
  CHECK(Row(get.output, "clicks") == "3");

  Outcome bad = f.Run({"stats", code, "--granularity=week"});
  CHECK(bad.exit_code == 2);
  CHECK(absl::StrContains(bad.output, "--granularity: must be hour or day, got \"week\""));
  Outcome reversed = f.Run({"stats", code, "--from=2030-01-02", "--to=2030-01-01"});
  CHECK(reversed.exit_code == 1);
  CHECK(absl::StrContains(reversed.output, "INVALID_ARGUMENT: start_time"));
  Outcome elsewhere = f.Run({"get", code, "--from=7d"});
  CHECK(elsewhere.exit_code == 2);
  CHECK(absl::StrContains(elsewhere.output, "apply to stats only"));
  Outcome missing = f.Run({"stats", "no-such-code"});
  CHECK(missing.exit_code == 1);
  CHECK(absl::StrContains(missing.output, "NOT_FOUND"));
}

TEST_CASE("shortenctl stats --csv prints a row per bucket and writes the top lists",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  Outcome shortened = f.Run({"shorten", "https://example.com/ctl-stats-csv"});
  REQUIRE(shortened.exit_code == 0);
  const std::string code = Row(shortened.output, "code");
  // Three human clicks over two hours and a bot; two of the clicks come
  // from a referrer whose host a spreadsheet would read as a formula.
  const std::string chrome =
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
      "Chrome/120.0.0.0 Safari/537.36";
  const std::string bot =
      "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
  struct Click {
    int hour;
    const char* ip;
    const std::string& agent;
    const char* referer;
  };
  const Click sent[] = {{0, "192.0.2.1", chrome, "https://-cmd.evil.example/a"},
                        {0, "192.0.2.2", chrome, "https://news.example/b"},
                        {1, "192.0.2.2", chrome, "https://-cmd.evil.example/c"},
                        {1, "192.0.2.3", bot, ""}};
  v1::RecordClicksRequest clicks;
  clicks.set_batch_id("ctl-stats-csv-1");
  for (const Click& click : sent) {
    v1::ClickEvent* e = clicks.add_events();
    e->set_code(code);
    *e->mutable_time() =
        grpcutil::ToProtoTimestamp(absl::FromUnixSeconds(1893456000 + 3600 * click.hour + 60));
    e->set_client_ip(click.ip);
    e->set_user_agent(click.agent);
    e->set_referer(click.referer);
    e->set_http_status(302);
  }
  REQUIRE(RecordClicks(f, clicks) == 4);

  const std::vector<std::string> range = {"stats", code, "--from=2030-01-01T00:00:00Z",
                                          "--to=2030-01-01T02:00:00Z", "--granularity=hour"};
  const std::string buckets =
      "start_time,human_clicks,bot_clicks,unique_visitors\r\n"
      "2030-01-01T00:00:00Z,2,0,2\r\n"
      "2030-01-01T01:00:00Z,1,1,1\r\n";
  const std::string tops =
      "list,rank,value,clicks\r\n"
      "browsers,1,Chrome,3\r\n"
      "os,1,Windows,3\r\n"
      "devices,1,desktop,3\r\n"
      "referrers,1,'-cmd.evil.example,2\r\n"
      "referrers,2,news.example,1\r\n";

  std::vector<std::string> args = range;
  args.push_back("--csv");
  Outcome csv = f.Run(args);
  INFO(csv.output);
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out == buckets);
  CHECK(csv.err.empty());

  const std::string top_file = f.Path("top.csv");
  args.push_back("--csv_top=" + top_file);
  Outcome to_file = f.Run(args);
  REQUIRE(to_file.exit_code == 0);
  CHECK(to_file.out == buckets);
  CHECK(ReadFile(top_file) == tops);

  args.back() = "--csv_top=-";
  Outcome both = f.Run(args);
  REQUIRE(both.exit_code == 0);
  CHECK(both.out == buckets + "\r\n" + tops);

  args.push_back("--json");
  Outcome with_json = f.Run(args);
  CHECK(with_json.exit_code == 2);
  CHECK(absl::StrContains(with_json.err, "--csv and --csv_top do not go with --json"));
  Outcome no_dir = f.Run({"stats", code, "--csv_top=" + f.Path("no-such-dir/top.csv")});
  CHECK(no_dir.exit_code == 2);
  CHECK(absl::StrContains(no_dir.err, "--csv_top: cannot write " + f.Path("no-such-dir/top.csv") +
                                          ": No such file or directory"));
  Outcome elsewhere = f.Run({"get", code, "--csv"});
  CHECK(elsewhere.exit_code == 2);
  CHECK(absl::StrContains(elsewhere.err, "apply to stats only"));
}

TEST_CASE("shortenctl --label labels links from shorten and batch; stats --label counts them",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  Outcome one = f.Run({"shorten", "https://example.com/ctl-label-a", "--label",
                       "campaign=ctl-spring", "--label=channel=sms"});
  INFO(one.output);
  REQUIRE(one.exit_code == 0);
  CHECK(Row(one.output, "labels") == "campaign=ctl-spring,channel=sms");
  const std::string a = Row(one.output, "code");
  Outcome batch = f.Run({"batch", "@input", "--label=campaign=ctl-spring"},
                        "https://example.com/ctl-label-b\nhttps://example.com/ctl-label-c\n");
  INFO(batch.output);
  REQUIRE(batch.exit_code == 0);
  std::vector<std::string> codes;
  for (absl::string_view line : absl::StrSplit(batch.out, '\n', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(line, '\t');
    REQUIRE(absl::StartsWith(parts[0], "https://sho.rt/"));
    codes.push_back(parts[0].substr(std::string("https://sho.rt/").size()));
  }
  REQUIRE(codes.size() == 2);
  Outcome get = f.Run({"get", codes[1]});
  CHECK(Row(get.output, "labels") == "campaign=ctl-spring");

  // Two human clicks on a, one on each batch link.
  v1::RecordClicksRequest clicks;
  clicks.set_batch_id("ctl-labels-1");
  for (const std::string& code : {a, a, codes[0], codes[1]}) {
    v1::ClickEvent* e = clicks.add_events();
    e->set_code(code);
    *e->mutable_time() = grpcutil::ToProtoTimestamp(absl::FromUnixSeconds(1893456000));
    e->set_client_ip("192.0.2.7");
    e->set_user_agent(
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/120.0.0.0 Safari/537.36");
    e->set_http_status(302);
  }
  REQUIRE(RecordClicks(f, clicks) == 4);
  Outcome campaign =
      f.Run({"stats", "--label=campaign=ctl-spring", "--from=2030-01-01", "--to=2030-01-02"});
  INFO(campaign.output);
  REQUIRE(campaign.exit_code == 0);
  CHECK(absl::StrContains(campaign.output, "labels.campaign = \"ctl-spring\": clicks per day"));
  CHECK(absl::StrContains(campaign.output, "total  "));
  Outcome json = f.Run({"--json", "stats", "--label", "campaign=ctl-spring", "--from=2030-01-01",
                        "--to=2030-01-02"});
  CHECK(absl::StrContains(json.output, "\"total_human_clicks\":\"4\""));
  Outcome sms =
      f.Run({"--json", "stats", "--label=channel=sms", "--from=2030-01-01", "--to=2030-01-02"});
  CHECK(absl::StrContains(sms.output, "\"total_human_clicks\":\"2\""));

  Outcome both = f.Run({"stats", a, "--label=campaign=ctl-spring"});
  CHECK(both.exit_code == 2);
  CHECK(absl::StrContains(both.output, "stats takes a CODE or --label, not both"));
  Outcome two = f.Run({"stats", "--label=campaign=ctl-spring", "--label=channel=sms"});
  CHECK(two.exit_code == 1);
  CHECK(absl::StrContains(two.output,
                          "INVALID_ARGUMENT: filter: only one label condition is supported"));
  Outcome bad = f.Run({"shorten", "https://example.com/ctl-label-d", "--label=Campaign=x"});
  CHECK(bad.exit_code == 1);
  CHECK(absl::StrContains(
      bad.output, "INVALID_ARGUMENT: labels: key \"Campaign\" must match [a-z][a-z0-9_-]{0,62}"));
  Outcome elsewhere = f.Run({"resolve", a, "--label=campaign=x"});
  CHECK(elsewhere.exit_code == 2);
  CHECK(absl::StrContains(elsewhere.output,
                          "--label applies to shorten, batch, stats, list and update only"));
}

TEST_CASE("shortenctl stats --label --tenant reads another tenant's label, for admins only",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  CreatedKey key = CreateKey(f, "ctl-tenant-b", "shorten,stats");
  const std::string with_key = "--api_key_file=" + key.file;
  Outcome shortened = f.RunWithoutKey(
      {with_key, "shorten", "https://example.com/ctl-tenant-b", "--label=campaign=ctl-b"});
  INFO(shortened.output);
  REQUIRE(shortened.exit_code == 0);
  const std::string code = Row(shortened.out, "code");
  v1::RecordClicksRequest clicks;
  clicks.set_batch_id("ctl-tenant-b-1");
  for (int i = 0; i < 3; ++i) {
    v1::ClickEvent* e = clicks.add_events();
    e->set_code(code);
    *e->mutable_time() = grpcutil::ToProtoTimestamp(absl::FromUnixSeconds(1893456000 + i));
    e->set_client_ip("192.0.2." + std::to_string(10 + i));
    e->set_user_agent("Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0");
    e->set_http_status(302);
  }
  REQUIRE(RecordClicks(f, clicks) == 3);
  const std::vector<std::string> range = {"--from=2030-01-01", "--to=2030-01-02"};
  auto stats = [&](std::vector<std::string> args) {
    args.insert(args.end(), range.begin(), range.end());
    return args;
  };

  // The admin names the tenant and gets its label's clicks; without
  // --tenant it reads its own tenant, which has no such label.
  Outcome admin =
      f.Run(stats({"--json", "stats", "--label=campaign=ctl-b", "--tenant=ctl-tenant-b"}));
  INFO(admin.output);
  CHECK(admin.exit_code == 0);
  CHECK(absl::StrContains(admin.output, "\"total_human_clicks\":\"3\""));
  Outcome own = f.Run(stats({"--json", "stats", "--label=campaign=ctl-b"}));
  CHECK(own.exit_code == 0);
  INFO(own.output);
  CHECK(absl::StrContains(own.output, "\"total_human_clicks\":\"0\""));
  // The tenant's own key may name itself, and nobody else.
  Outcome self = f.RunWithoutKey(
      stats({with_key, "--json", "stats", "--label=campaign=ctl-b", "--tenant=ctl-tenant-b"}));
  CHECK(self.exit_code == 0);
  CHECK(absl::StrContains(self.output, "\"total_human_clicks\":\"3\""));
  Outcome other = f.RunWithoutKey(
      stats({with_key, "stats", "--label=campaign=ctl-b", "--tenant=someone-else"}));
  CHECK(other.exit_code == 1);
  CHECK(absl::StartsWith(other.err, "shortenctl: PERMISSION_DENIED: tenant: api key "));
  // A code names its own link: --tenant has nothing to say there.
  Outcome by_code = f.Run(stats({"stats", code, "--tenant=ctl-tenant-b"}));
  CHECK(by_code.exit_code == 2);
  CHECK(absl::StrContains(by_code.err, "--tenant applies to stats --label only"));
  Outcome elsewhere = f.Run({"get", code, "--tenant=ctl-tenant-b"});
  CHECK(elsewhere.exit_code == 2);
  CHECK(absl::StrContains(elsewhere.err,
                          "(and --tenant to stats --label, list, and delete and revoke --label)"));
}

TEST_CASE("shortenctl qr writes the link's QR code, which a decoder reads as its short URL",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  Outcome shortened = f.Run({"shorten", "https://example.com/ctl-qr"});
  INFO(shortened.output);
  REQUIRE(shortened.exit_code == 0);
  const std::string code = Row(shortened.out, "code");
  const std::string short_url = "https://sho.rt/" + code;

  const std::string png = f.Path("qr.png");
  Outcome wrote = f.Run({"qr", code, "-o", png});
  INFO(wrote.output);
  REQUIRE(wrote.exit_code == 0);
  CHECK(absl::StartsWith(wrote.out, "wrote " + png + ": image/png, "));
  CHECK(absl::EndsWith(wrote.out, " bytes, encoding " + short_url + "\n"));
  // The mode of any new file (not mkstemp's 0600).
  const mode_t mask = umask(0);
  umask(mask);
  struct stat written {};
  REQUIRE(stat(png.c_str(), &written) == 0);
  CHECK((written.st_mode & 0777) == (0666 & ~mask));
  absl::StatusOr<std::vector<std::string>> read = DecodeQrPng(ReadFile(png));
  REQUIRE(read.ok());
  CHECK(*read == std::vector<std::string>{short_url});

  // -o - writes the image to stdout, the note to stderr.
  Outcome piped = f.Run({"qr", code, "-o", "-"});
  REQUIRE(piped.exit_code == 0);
  read = DecodeQrPng(piped.out);
  REQUIRE(read.ok());
  CHECK(*read == std::vector<std::string>{short_url});
  CHECK(absl::StartsWith(piped.err, "wrote stdout: image/png, "));

  // An .svg file is an SVG; options reach the service.
  const std::string svg = f.Path("qr.svg");
  Outcome drawn =
      f.Run({"--json", "qr", code, "--output=" + svg, "--size=1024", "--margin=2", "--level=h"});
  INFO(drawn.output);
  REQUIRE(drawn.exit_code == 0);
  CHECK(absl::StrContains(drawn.out, "\"content_type\":\"image/svg+xml\""));
  CHECK(absl::StrContains(drawn.out, "\"short_url\":\"" + short_url + "\""));
  CHECK(absl::StrContains(ReadFile(svg), "width=\"1024\" height=\"1024\""));
  read = DecodeQrSvg(ReadFile(svg), 400);
  REQUIRE(read.ok());
  CHECK(*read == std::vector<std::string>{short_url});

  // Refusals: the service's range check, flags checked before any call, an
  // unknown code; none leaves a file behind.
  const std::string refused = f.Path("refused.png");
  Outcome tiny = f.Run({"qr", code, "-o", refused, "--size=10"});
  CHECK(tiny.exit_code == 1);
  CHECK(tiny.err == "shortenctl: INVALID_ARGUMENT: size_px: must be 64 to 4096, got 10\n");
  Outcome level = f.Run({"qr", code, "-o", refused, "--level=X"});
  CHECK(level.exit_code == 2);
  CHECK(absl::StartsWith(level.err, "shortenctl: --level: must be L, M, Q or H, got \"X\"\n"));
  Outcome no_file = f.Run({"qr", code});
  CHECK(no_file.exit_code == 2);
  CHECK(absl::StartsWith(no_file.err, "shortenctl: qr needs -o FILE"));
  Outcome missing = f.Run({"qr", "no-such-alias", "-o", refused});
  CHECK(missing.exit_code == 1);
  CHECK(absl::StartsWith(missing.err, "shortenctl: NOT_FOUND: "));
  // A write that fails at the rename (the name is a directory) leaves
  // neither the file nor its temporary file behind.
  const std::string dir = f.Path("qr-dir");
  std::filesystem::create_directory(dir);
  Outcome into_dir = f.Run({"qr", code, "-o", dir});
  CHECK(into_dir.exit_code == 1);
  CHECK(absl::StartsWith(into_dir.err, "shortenctl: cannot write " + dir + ": "));
  CHECK(std::filesystem::is_directory(dir));
  int leftovers = 0;
  for (const auto& entry : std::filesystem::directory_iterator(f.Path(""))) {
    const std::string name = entry.path().filename().string();
    if (absl::StartsWith(name, "refused.png") || absl::StartsWith(name, "qr-dir.")) ++leftovers;
  }
  CHECK(leftovers == 0);
  Outcome unwritable = f.Run({"qr", code, "-o", f.Path("no-such-dir/qr.png")});
  CHECK(unwritable.exit_code == 1);
  CHECK(
      absl::StartsWith(unwritable.err, "shortenctl: cannot write " + f.Path("no-such-dir/qr.png")));
  Outcome elsewhere = f.Run({"get", code, "--size=100"});
  CHECK(elsewhere.exit_code == 2);
  CHECK(absl::StrContains(elsewhere.err, "apply to qr only"));

  // Another tenant's link is not found for it, as with get.
  CreatedKey key = CreateKey(f, "ctl-qr-other", "stats");
  Outcome other = f.RunWithoutKey({"--api_key_file=" + key.file, "qr", code, "-o", refused});
  CHECK(other.exit_code == 1);
  CHECK(absl::StartsWith(other.err, "shortenctl: NOT_FOUND: "));
}

// The codes of `list`'s table rows (the header skipped).
std::vector<std::string> ListedCodes(const std::string& out) {
  std::vector<std::string> codes;
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "CODE ")) continue;
    codes.push_back(std::string(line.substr(0, line.find(' '))));
  }
  return codes;
}

// The token `list` printed on stderr after "--page_token=".
std::string PrintedToken(const std::string& err) {
  const size_t at = err.find("--page_token=");
  if (at == std::string::npos) return "";
  const size_t start = at + std::string("--page_token=").size();
  return err.substr(start, err.find_first_of(" \n", start) - start);
}

TEST_CASE("shortenctl list pages through a tenant's links, filtered, ordered and with clicks",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  CreatedKey key = CreateKey(f, "ctl-list", "shorten,stats");
  const std::string with_key = "--api_key_file=" + key.file;
  std::vector<std::string> codes;  // oldest first
  for (int i = 0; i < 7; ++i) {
    std::vector<std::string> args = {with_key, "shorten",
                                     "https://example.com/ctl-list/" + std::to_string(i)};
    if (i % 2 == 0) args.push_back("--label=campaign=ctl-list");
    Outcome shortened = f.RunWithoutKey(args);
    INFO(shortened.output);
    REQUIRE(shortened.exit_code == 0);
    codes.push_back(Row(shortened.out, "code"));
  }
  const std::vector<std::string> newest_first(codes.rbegin(), codes.rend());

  Outcome all = f.RunWithoutKey({with_key, "list"});
  INFO(all.output);
  REQUIRE(all.exit_code == 0);
  CHECK(
      absl::StartsWith(all.out, "CODE       STATE      CLICKS  CREATED               LONG_URL\n"));
  CHECK(ListedCodes(all.out) == newest_first);
  CHECK(absl::StrContains(all.out, " ACTIVE "));
  CHECK(absl::StrContains(all.out, "https://example.com/ctl-list/6\n"));
  CHECK(all.err.empty());

  // Two per page: the token printed goes on where the page ended.
  Outcome first = f.RunWithoutKey({with_key, "list", "--page_size=2"});
  REQUIRE(first.exit_code == 0);
  CHECK(ListedCodes(first.out) == std::vector<std::string>(codes.rbegin(), codes.rbegin() + 2));
  const std::string token = PrintedToken(first.err);
  REQUIRE_FALSE(token.empty());
  CHECK(absl::StrContains(first.err, "(or --all)"));
  Outcome second = f.RunWithoutKey({with_key, "list", "--page_size=2", "--page_token=" + token});
  REQUIRE(second.exit_code == 0);
  CHECK(ListedCodes(second.out) ==
        std::vector<std::string>(codes.rbegin() + 2, codes.rbegin() + 4));

  // --all streams every page; --json one Link per line.
  Outcome every = f.RunWithoutKey(
      {with_key, "--json", "list", "--all", "--page_size=3", "--order_by=create_time"});
  INFO(every.output);
  REQUIRE(every.exit_code == 0);
  std::vector<std::string> lines = absl::StrSplit(every.out, '\n', absl::SkipEmpty());
  REQUIRE(lines.size() == 7);
  for (size_t i = 0; i < lines.size(); ++i) {
    CHECK(absl::StrContains(lines[i], "\"code\":\"" + codes[i] + "\""));
    CHECK(absl::StrContains(lines[i], "\"click_count\":\"0\""));
  }
  CHECK(every.err.empty());

  // Labels and a filter together.
  Outcome labelled =
      f.RunWithoutKey({with_key, "list", "--label=campaign=ctl-list", "--filter=state = ACTIVE"});
  REQUIRE(labelled.exit_code == 0);
  CHECK(ListedCodes(labelled.out) ==
        std::vector<std::string>{codes[6], codes[4], codes[2], codes[0]});

  // Clicks: counted at once, ranked once merged (every 5 s).
  v1::RecordClicksRequest clicks;
  clicks.set_batch_id("ctl-list-1");
  for (const std::string& code : {codes[1], codes[1], codes[1], codes[5]}) {
    v1::ClickEvent* e = clicks.add_events();
    e->set_code(code);
    *e->mutable_time() = grpcutil::ToProtoTimestamp(absl::Now() - absl::Minutes(1));
    e->set_client_ip("192.0.2.7");
    e->set_user_agent("Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0");
    e->set_http_status(302);
  }
  REQUIRE(RecordClicks(f, clicks) == 4);
  Outcome counted = f.RunWithoutKey({with_key, "--json", "list", "--page_size=1000"});
  CHECK(absl::StrContains(counted.out, "\"code\":\"" + codes[1] + "\",\"short_url\""));
  CHECK(absl::StrContains(counted.out, "\"click_count\":\"3\""));
  std::vector<std::string> ranked;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  const std::vector<std::string> want_ranked = {codes[1], codes[5], codes[6], codes[4],
                                                codes[3], codes[2], codes[0]};
  while (ranked != want_ranked && absl::Now() < deadline) {
    Outcome by_clicks = f.RunWithoutKey({with_key, "list", "--order_by=click_count desc", "--all"});
    REQUIRE(by_clicks.exit_code == 0);
    ranked = ListedCodes(by_clicks.out);
    if (ranked != want_ranked) absl::SleepFor(absl::Milliseconds(500));
  }
  CHECK(ranked == want_ranked);

  // Refusals: the service's with exit 1, the command line's with exit 2.
  Outcome bad_filter = f.RunWithoutKey({with_key, "list", "--filter=colour = red"});
  CHECK(bad_filter.exit_code == 1);
  CHECK(absl::StrContains(bad_filter.err,
                          "shortenctl: INVALID_ARGUMENT: filter: unknown field \"colour\""));
  Outcome foreign_token = f.RunWithoutKey(
      {with_key, "list", "--page_size=2", "--order_by=create_time", "--page_token=" + token});
  CHECK(foreign_token.exit_code == 1);
  CHECK(absl::StrContains(foreign_token.err, "page_token: it belongs to another filter"));
  Outcome other_tenant = f.RunWithoutKey({with_key, "list", "--tenant=someone-else"});
  CHECK(other_tenant.exit_code == 1);
  CHECK(absl::StrContains(other_tenant.err, "PERMISSION_DENIED"));
  Outcome as_admin = f.Run({"list", "--tenant=ctl-list", "--page_size=1000"});
  CHECK(as_admin.exit_code == 0);
  CHECK(ListedCodes(as_admin.out).size() == 7);
  for (const std::vector<std::string>& usage :
       std::vector<std::vector<std::string>>{{"list", "--page_size=0"},
                                             {"list", "--page_size=1001"},
                                             {"list", "extra"},
                                             {"list", "--all", "--page_token=x"},
                                             {"list", "--alias=x"},
                                             {"get", codes[0], "--filter=state = ACTIVE"},
                                             {"get", codes[0], "--all"}}) {
    std::vector<std::string> args = usage;
    args.insert(args.begin(), with_key);
    Outcome refused = f.RunWithoutKey(args);
    INFO(refused.output);
    CHECK(refused.exit_code == 2);
  }
}

TEST_CASE("shortenctl update re-points a link and get --history shows who changed what",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  Outcome shortened = f.Run({"shorten", "https://example.com/ctl-update-typo", "--force_new"});
  REQUIRE(shortened.exit_code == 0);
  const std::string code = Row(shortened.out, "code");

  Outcome updated =
      f.Run({"update", code, "--url=https://example.com/ctl-update-fixed", "--redirect=307",
             "--max_clicks=50", "--label=campaign=ctl-update", "--expire=30d"});
  INFO(updated.output);
  REQUIRE(updated.exit_code == 0);
  CHECK(Row(updated.out, "long_url") == "https://example.com/ctl-update-fixed");
  CHECK(Row(updated.out, "redirect") == "307");
  CHECK(Row(updated.out, "budget") == "50 clicks");
  CHECK(Row(updated.out, "labels") == "campaign=ctl-update");
  Outcome resolved = f.Run({"resolve", code});
  CHECK(Row(resolved.out, "long_url") == "https://example.com/ctl-update-fixed");

  // Clearing: no expiry, no budget, no labels.
  Outcome cleared = f.Run({"update", code, "--expire=never", "--max_clicks=0", "--clear_labels"});
  INFO(cleared.output);
  REQUIRE(cleared.exit_code == 0);
  CHECK(Row(cleared.out, "expires") == "never");
  CHECK(Row(cleared.out, "budget").empty());
  CHECK(Row(cleared.out, "labels").empty());

  Outcome history = f.Run({"get", code, "--history"});
  INFO(history.output);
  REQUIRE(history.exit_code == 0);
  CHECK(absl::StrContains(
      history.out,
      "by bootstrap-admin (api key 1): long_url https://example.com/ctl-update-typo "
      "-> https://example.com/ctl-update-fixed\n"));
  CHECK(absl::StrContains(history.out, ": redirect_type 302 -> 307\n"));
  CHECK(absl::StrContains(history.out, ": max_clicks (none) -> 50\n"));
  CHECK(absl::StrContains(history.out, ": max_clicks 50 -> (none)\n"));
  CHECK(absl::StrContains(history.out, ": labels campaign=ctl-update -> (none)\n"));
  Outcome json = f.Run({"--json", "get", code, "--history"});
  INFO(json.out);
  CHECK(absl::StrContains(json.out, "\"history\":[{\"actor\":\"bootstrap-admin (api key 1)\""));
  Outcome plain = f.Run({"get", code});
  CHECK_FALSE(absl::StrContains(plain.out, "changed "));

  // Refusals: the service's (exit 1) and the command line's (exit 2).
  Outcome bad_url = f.Run({"update", code, "--url=javascript:alert(1)"});
  CHECK(bad_url.exit_code == 1);
  CHECK(absl::StrContains(bad_url.err, "INVALID_ARGUMENT: long_url: "));
  Outcome nothing = f.Run({"update", code});
  CHECK(nothing.exit_code == 2);
  CHECK(absl::StrContains(nothing.err, "update needs a change"));
  Outcome two = f.Run({"update", code, "extra", "--url=https://example.com/x"});
  CHECK(two.exit_code == 2);
  Outcome alias = f.Run({"update", code, "--alias=x", "--url=https://example.com/x"});
  CHECK(alias.exit_code == 2);
  Outcome elsewhere = f.Run({"get", code, "--url=https://example.com/x"});
  CHECK(elsewhere.exit_code == 2);
  Outcome history_elsewhere = f.Run({"resolve", code, "--history"});
  CHECK(history_elsewhere.exit_code == 2);
  Outcome unknown = f.Run({"update", "nosuchalias", "--url=https://example.com/x"});
  CHECK(unknown.exit_code == 1);
  CHECK(absl::StrContains(unknown.err, "NOT_FOUND"));
}

TEST_CASE("shortenctl delete removes a link; revoke and delete --label walk a campaign",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  Outcome one = f.Run({"shorten", "https://example.com/ctl-delete-one", "--force_new"});
  REQUIRE(one.exit_code == 0);
  const std::string code = Row(one.out, "code");
  Outcome deleted = f.Run({"delete", code});
  INFO(deleted.output);
  REQUIRE(deleted.exit_code == 0);
  CHECK(deleted.out == "deleted " + code + "\n");
  Outcome gone = f.Run({"resolve", code});
  CHECK(gone.exit_code == 1);
  CHECK(absl::StrContains(gone.err, "NOT_FOUND: code \"" + code + "\" does not exist"));
  Outcome again = f.Run({"delete", code});
  CHECK(again.exit_code == 1);
  CHECK(absl::StrContains(again.err, "NOT_FOUND"));

  // A campaign of 5: revoked in calls of 2, then deleted.
  std::vector<std::string> campaign;
  for (int i = 0; i < 5; ++i) {
    Outcome made = f.Run({"shorten", "https://example.com/ctl-delete/" + std::to_string(i),
                          "--force_new", "--label=campaign=ctl-bulk"});
    REQUIRE(made.exit_code == 0);
    campaign.push_back(Row(made.out, "code"));
  }
  Outcome other = f.Run({"shorten", "https://example.com/ctl-delete-other", "--force_new",
                         "--label=campaign=ctl-kept"});
  REQUIRE(other.exit_code == 0);
  Outcome revoked = f.Run({"revoke", "--label=campaign=ctl-bulk", "--page_size=2"});
  INFO(revoked.output);
  REQUIRE(revoked.exit_code == 0);
  for (const std::string& c : campaign)
    CHECK(absl::StrContains(revoked.out, "revoked " + c + "\n"));
  CHECK(absl::StrContains(revoked.err, "shortenctl: revoked 5 links"));
  Outcome json =
      f.Run({"--json", "delete", "--label=campaign=ctl-bulk", "--filter=state = REVOKED"});
  INFO(json.output);
  REQUIRE(json.exit_code == 0);
  for (const std::string& c : campaign) {
    CHECK(absl::StrContains(json.out, "{\"code\":\"" + c + "\",\"deleted\":true}\n"));
    CHECK(f.Run({"resolve", c}).exit_code == 1);
  }
  CHECK(f.Run({"resolve", Row(other.out, "code")}).exit_code == 0);

  // Refusals: the command line's (exit 2) and the service's (exit 1).
  CHECK(f.Run({"delete"}).exit_code == 2);
  CHECK(f.Run({"delete", code, "--label=campaign=x"}).exit_code == 2);
  CHECK(f.Run({"delete", "--label=campaign=x", "--page_size=10001"}).exit_code == 2);
  CHECK(f.Run({"delete", "--label=campaign=x", "--order_by=create_time"}).exit_code == 2);
  CHECK(f.Run({"delete", code, "--page_size=5"}).exit_code == 2);
  Outcome bad_filter = f.Run({"revoke", "--filter=state = SOMETIMES"});
  CHECK(bad_filter.exit_code == 1);
  CHECK(absl::StrContains(bad_filter.err, "INVALID_ARGUMENT: filter"));
}

}  // namespace
}  // namespace shortener::testing
