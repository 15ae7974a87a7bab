// shortenctl argument parsing: --expire and --redirect values, the
// ShortenRequest they build, the flags of keys create and the request they
// build, where the API key comes from, and the scan of argv into flags and
// commands.
#include "services/shortenctl/args.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "lib/grpcutil/status.h"
#include "tests/support/status_matchers.h"

// Flags like main.cc's, for ParseArgv to find (names of their own, so they
// can never clash with a flag of a library linked into this test).
ABSL_FLAG(std::string, ctltest_alias, "", "an alias");
ABSL_FLAG(bool, ctltest_force, false, "a boolean");
ABSL_FLAG(absl::Duration, ctltest_timeout, absl::Seconds(5), "a duration");
// Named as shortenctl's own: ParseArgv joins repeated --label flags.
ABSL_FLAG(std::string, label, "", "labels");

namespace shortener::ctl {
namespace {

using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

const absl::Time kNow = absl::FromUnixSeconds(1767225600);  // 2026-01-01T00:00:00Z

absl::Time Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone());
}

TEST_CASE("ParseExpire accepts RFC 3339 times with Z, offsets and fractions",
          "[services/shortenctl]") {
  CHECK(ParseExpire("2027-01-01T00:00:00Z", kNow).value() == Utc(2027, 1, 1));
  CHECK(ParseExpire("2027-01-01T02:00:00+02:00", kNow).value() == Utc(2027, 1, 1));
  CHECK(ParseExpire("2027-01-01T00:00:00.5Z", kNow).value() ==
        Utc(2027, 1, 1) + absl::Milliseconds(500));
  CHECK(ParseExpire("  2027-01-01T00:00:00Z ", kNow).value() == Utc(2027, 1, 1));
}

TEST_CASE("ParseExpire accepts a date as midnight UTC", "[services/shortenctl]") {
  CHECK(ParseExpire("2027-03-04", kNow).value() == Utc(2027, 3, 4));
}

TEST_CASE("ParseExpire accepts durations from now, days included", "[services/shortenctl]") {
  CHECK(ParseExpire("24h", kNow).value() == kNow + absl::Hours(24));
  CHECK(ParseExpire("1h30m", kNow).value() == kNow + absl::Minutes(90));
  CHECK(ParseExpire("90s", kNow).value() == kNow + absl::Seconds(90));
  CHECK(ParseExpire("7d", kNow).value() == kNow + absl::Hours(7 * 24));
}

TEST_CASE("ParseExpire rejects garbage and non-positive durations", "[services/shortenctl]") {
  for (const char* bad : {"", "tomorrow", "24", "2027-13-01", "2027-01-01T00:00:00", "0s", "-1h",
                          "inf", "d", "1.5d", "2027-01-01 00:00:00Z"}) {
    INFO("--expire=" << bad);
    CHECK_THAT(ParseExpire(bad, kNow),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--expire"));
  }
}

TEST_CASE("BuildClickStatsRequest counts durations back from now and checks granularity",
          "[services/shortenctl]") {
  StatsFlags flags;
  v1::GetClickStatsRequest plain = BuildClickStatsRequest("abc", flags, kNow).value();
  CHECK(plain.code() == "abc");
  CHECK_FALSE(plain.has_start_time());  // the service's defaults
  CHECK_FALSE(plain.has_end_time());
  CHECK(plain.granularity() == v1::GRANULARITY_UNSPECIFIED);

  flags.from = "30d";
  flags.to = "2027-01-01T00:00:00Z";
  flags.granularity = "HOUR";
  v1::GetClickStatsRequest req = BuildClickStatsRequest("abc", flags, kNow).value();
  CHECK(grpcutil::FromProtoTimestamp(req.start_time()) == kNow - absl::Hours(30 * 24));
  CHECK(grpcutil::FromProtoTimestamp(req.end_time()) ==
        absl::FromCivil(absl::CivilDay(2027, 1, 1), absl::UTCTimeZone()));
  CHECK(req.granularity() == v1::GRANULARITY_HOUR);

  flags = StatsFlags{};
  flags.granularity = "week";
  CHECK_THAT(BuildClickStatsRequest("abc", flags, kNow),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--granularity"));
  flags = StatsFlags{};
  flags.from = "yesterday";
  CHECK_THAT(BuildClickStatsRequest("abc", flags, kNow),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--from"));
  flags = StatsFlags{};
  flags.to = "-1h";
  CHECK_THAT(BuildClickStatsRequest("abc", flags, kNow),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--to"));
}

TEST_CASE("ParseRedirect maps HTTP statuses to redirect types", "[services/shortenctl]") {
  CHECK(ParseRedirect("301").value() == v1::REDIRECT_TYPE_MOVED_PERMANENTLY);
  CHECK(ParseRedirect("302").value() == v1::REDIRECT_TYPE_FOUND);
  CHECK(ParseRedirect("307").value() == v1::REDIRECT_TYPE_TEMPORARY);
  CHECK(ParseRedirect("308").value() == v1::REDIRECT_TYPE_PERMANENT);
  for (const char* bad : {"", "300", "303", "found", " 302"}) {
    CHECK_THAT(ParseRedirect(bad),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--redirect"));
  }
}

TEST_CASE("BuildShortenRequest carries every flag", "[services/shortenctl]") {
  ShortenFlags flags;
  flags.alias = "spring-sale";
  flags.expire = "24h";
  flags.redirect = "308";
  flags.force_new = true;
  flags.request_id = "req-1";
  flags.max_clicks = 1000;
  absl::StatusOr<v1::ShortenRequest> request =
      BuildShortenRequest("https://example.com/", flags, kNow);
  REQUIRE_THAT(request, IsOk());
  CHECK(request->long_url() == "https://example.com/");
  CHECK(request->custom_alias() == "spring-sale");
  CHECK(grpcutil::FromProtoTimestamp(request->expire_time()) == kNow + absl::Hours(24));
  CHECK(request->redirect_type() == v1::REDIRECT_TYPE_PERMANENT);
  CHECK(request->force_new());
  CHECK(request->request_id() == "req-1");
  CHECK(request->max_clicks() == 1000);
}

TEST_CASE("BuildShortenRequest leaves unset flags unset", "[services/shortenctl]") {
  absl::StatusOr<v1::ShortenRequest> request =
      BuildShortenRequest("https://example.com/", ShortenFlags(), kNow);
  REQUIRE_THAT(request, IsOk());
  CHECK_FALSE(request->has_expire_time());
  CHECK(request->redirect_type() == v1::REDIRECT_TYPE_UNSPECIFIED);
  CHECK(request->custom_alias().empty());
  CHECK_FALSE(request->force_new());
  CHECK(request->max_clicks() == 0);
}

TEST_CASE("BuildShortenRequest fails on a bad --expire --redirect or --max_clicks",
          "[services/shortenctl]") {
  ShortenFlags flags;
  flags.expire = "soon";
  CHECK_THAT(BuildShortenRequest("https://example.com/", flags, kNow),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--expire"));
  flags.expire.clear();
  flags.redirect = "200";
  CHECK_THAT(BuildShortenRequest("https://example.com/", flags, kNow),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--redirect"));
  flags.redirect.clear();
  flags.max_clicks = -5;
  CHECK_THAT(BuildShortenRequest("https://example.com/", flags, kNow),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--max_clicks"));
}

TEST_CASE("BuildCreateApiKeyRequest splits scopes and domains and parses rate and burst",
          "[services/shortenctl]") {
  KeyFlags flags;
  flags.name = " edge-eu-1 ";
  flags.tenant = "edge";
  flags.scopes = "resolve, record_clicks,";
  flags.domains = "example.com,*.example.org";
  flags.rate = "2.5";
  flags.burst = "10";
  absl::StatusOr<v1::CreateApiKeyRequest> request = BuildCreateApiKeyRequest(flags);
  REQUIRE_THAT(request, IsOk());
  CHECK(request->name() == "edge-eu-1");
  CHECK(request->tenant() == "edge");
  CHECK(std::vector<std::string>(request->scopes().begin(), request->scopes().end()) ==
        std::vector<std::string>{"resolve", "record_clicks"});
  CHECK(std::vector<std::string>(request->allowed_domains().begin(),
                                 request->allowed_domains().end()) ==
        std::vector<std::string>{"example.com", "*.example.org"});
  CHECK(request->rate_per_second() == 2.5);
  CHECK(request->burst() == 10);
}

TEST_CASE("BuildCreateApiKeyRequest passes --infrastructure on, for the service to check",
          "[services/shortenctl]") {
  KeyFlags flags;
  flags.name = "edge-eu-1";
  flags.scopes = "resolve,record_clicks,watch_invalidations";
  flags.infrastructure = true;
  absl::StatusOr<v1::CreateApiKeyRequest> request = BuildCreateApiKeyRequest(flags);
  REQUIRE_THAT(request, IsOk());
  CHECK(request->infrastructure());
  CHECK(request->tenant().empty());
  CHECK(std::vector<std::string>(request->scopes().begin(), request->scopes().end()) ==
        std::vector<std::string>{"resolve", "record_clicks", "watch_invalidations"});
  flags.infrastructure = false;
  request = BuildCreateApiKeyRequest(flags);
  REQUIRE_THAT(request, IsOk());
  CHECK_FALSE(request->infrastructure());
}

TEST_CASE("BuildCreateApiKeyRequest leaves tenant, domains and limits to the service",
          "[services/shortenctl]") {
  KeyFlags flags;
  flags.name = "cli";
  flags.scopes = "shorten";
  absl::StatusOr<v1::CreateApiKeyRequest> request = BuildCreateApiKeyRequest(flags);
  REQUIRE_THAT(request, IsOk());
  CHECK(request->tenant().empty());
  CHECK(request->allowed_domains().empty());
  CHECK(request->rate_per_second() == 0);
  CHECK(request->burst() == 0);
}

TEST_CASE("BuildCreateApiKeyRequest names the flag that is missing or bad",
          "[services/shortenctl]") {
  struct Case {
    KeyFlags flags;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"", "", "shorten", "", "", ""}, "needs --name"},
      {{"  ", "", "shorten", "", "", ""}, "needs --name"},
      {{"n", "", "", "", "", ""}, "needs --scopes"},
      {{"n", "", " , ", "", "", ""}, "needs --scopes"},
      {{"n", "", "shorten", "", "fast", ""}, "--rate"},
      {{"n", "", "shorten", "", "-1", ""}, "--rate"},
      {{"n", "", "shorten", "", "inf", ""}, "--rate"},
      {{"n", "", "shorten", "", "nan", ""}, "--rate"},
      {{"n", "", "shorten", "", "1", "-2"}, "--burst"},
      {{"n", "", "shorten", "", "1", "1.5"}, "--burst"},
      {{"n", "", "shorten", "", "1", "99999999999"}, "--burst"},
  };
  for (const Case& c : cases) {
    INFO("name=" << c.flags.name << " scopes=" << c.flags.scopes << " rate=" << c.flags.rate
                 << " burst=" << c.flags.burst);
    CHECK_THAT(BuildCreateApiKeyRequest(c.flags),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument, c.message));
  }
}

TEST_CASE("BuildQrCodeRequest takes the format from --format or the file, and names bad flags",
          "[services/shortenctl]") {
  QrFlags flags;
  flags.output = "poster.SVG";
  v1::GetQrCodeRequest svg = BuildQrCodeRequest("abc", flags).value();
  CHECK(svg.code() == "abc");
  CHECK(svg.format() == v1::GetQrCodeRequest::FORMAT_SVG);
  CHECK(svg.size_px() == 0);  // the service's default
  CHECK_FALSE(svg.has_margin_modules());
  CHECK(svg.error_correction() == v1::GetQrCodeRequest::ERROR_CORRECTION_UNSPECIFIED);
  flags.format = "PNG";
  flags.size = "512";
  flags.margin = "0";
  flags.level = "q";
  v1::GetQrCodeRequest png = BuildQrCodeRequest("abc", flags).value();
  CHECK(png.format() == v1::GetQrCodeRequest::FORMAT_PNG);
  CHECK(png.size_px() == 512);
  CHECK(png.has_margin_modules());
  CHECK(png.margin_modules() == 0);
  CHECK(png.error_correction() == v1::GetQrCodeRequest::ERROR_CORRECTION_QUARTILE);
  flags = QrFlags{};
  flags.output = "-";
  CHECK(BuildQrCodeRequest("abc", flags).value().format() == v1::GetQrCodeRequest::FORMAT_PNG);

  auto refused = [](QrFlags f) {
    return std::string(BuildQrCodeRequest("abc", f).status().message());
  };
  QrFlags bad;
  bad.format = "gif";
  CHECK(refused(bad) == "--format: must be png or svg, got \"gif\"");
  bad = QrFlags{};
  bad.size = "big";
  CHECK(refused(bad) == "--size: must be a number of pixels (64 to 4096), got \"big\"");
  bad = QrFlags{};
  bad.margin = "-1";
  CHECK(refused(bad) == "--margin: must be a number of modules (0 to 16), got \"-1\"");
  bad = QrFlags{};
  bad.level = "X";
  CHECK(refused(bad) == "--level: must be L, M, Q or H, got \"X\"");
}

TEST_CASE("ParseApiKeyId takes positive integers only", "[services/shortenctl]") {
  CHECK(ParseApiKeyId("7").value() == 7);
  CHECK(ParseApiKeyId("9223372036854775807").value() == INT64_MAX);
  for (const char* bad : {"", "0", "-3", "x", "3a", "1.0", "9223372036854775808"}) {
    INFO(bad);
    CHECK_THAT(ParseApiKeyId(bad),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "ID must be a positive"));
  }
}

// A temp dir for key files, removed at the end of the test.
class KeyDir {
 public:
  KeyDir() {
    char templ[] = "/tmp/ctl_args_test.XXXXXX";
    REQUIRE(mkdtemp(templ) != nullptr);
    path_ = templ;
  }
  ~KeyDir() { std::filesystem::remove_all(path_); }
  // Writes `content` to a file named `name`; returns its path.
  std::string Write(const std::string& name, const std::string& content) const {
    const std::string path = path_ + "/" + name;
    std::ofstream(path) << content;
    return path;
  }

 private:
  std::string path_;
};

TEST_CASE("ResolveApiKey takes the file, else the environment, else nothing",
          "[services/shortenctl]") {
  KeyDir dir;
  const std::string file = dir.Write("key", "shk_from_file\n");
  CHECK(ResolveApiKey(file, "shk_from_env").value() == "shk_from_file");
  CHECK(ResolveApiKey("", " shk_from_env\n").value() == "shk_from_env");
  CHECK(ResolveApiKey("", "").value().empty());
}

TEST_CASE("ResolveApiKey names the source of a bad key and never echoes it",
          "[services/shortenctl]") {
  KeyDir dir;
  CHECK_THAT(ResolveApiKey(dir.Write("empty", " \n"), "shk_ok"),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--api_key_file"));
  CHECK_THAT(ResolveApiKey(dir.Write("missing", "") + ".nope", ""),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--api_key_file"));
  absl::StatusOr<std::string> spaced = ResolveApiKey(dir.Write("spaced", "shk_a b"), "");
  CHECK_THAT(spaced, HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--api_key_file"));
  CHECK_FALSE(absl::StrContains(spaced.status().message(), "shk_a"));
  const std::string shared = dir.Write("shared", "shk_shared\n");
  REQUIRE(::chmod(shared.c_str(), 0666) == 0);
  absl::StatusOr<std::string> writable = ResolveApiKey(shared, "");
  CHECK_THAT(writable, HasCodeAndMessage(absl::StatusCode::kFailedPrecondition,
                                         "--api_key_file: " + shared +
                                             " is writable by other users (mode 0666)"));
  CHECK_FALSE(absl::StrContains(writable.status().message(), "shk_shared"));
  absl::StatusOr<std::string> env = ResolveApiKey("", "shk_secret part");
  CHECK_THAT(env, HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "SHORTENER_API_KEY"));
  CHECK_FALSE(absl::StrContains(env.status().message(), "shk_secret"));
}

// ParseArgv takes a mutable argv like main's.
absl::StatusOr<CommandLine> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "shortenctl");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return ParseArgv(static_cast<int>(argv.size()), argv.data());
}

void ResetTestFlags() {
  absl::SetFlag(&FLAGS_ctltest_alias, "");
  absl::SetFlag(&FLAGS_ctltest_force, false);
  absl::SetFlag(&FLAGS_ctltest_timeout, absl::Seconds(5));
}

TEST_CASE("ParseArgv takes flags before and after the command, in every form",
          "[services/shortenctl]") {
  ResetTestFlags();
  absl::StatusOr<CommandLine> parsed =
      Parse({"--ctltest_timeout=2s", "shorten", "https://a.example/", "--ctltest_alias", "x_1",
             "-ctltest_force"});
  REQUIRE_THAT(parsed, IsOk());
  CHECK_FALSE(parsed->help);
  CHECK(parsed->positional == std::vector<std::string>{"shorten", "https://a.example/"});
  CHECK(absl::GetFlag(FLAGS_ctltest_timeout) == absl::Seconds(2));
  CHECK(absl::GetFlag(FLAGS_ctltest_alias) == "x_1");
  CHECK(absl::GetFlag(FLAGS_ctltest_force));

  REQUIRE_THAT(Parse({"--noctltest_force", "batch", "-"}), IsOk());
  CHECK_FALSE(absl::GetFlag(FLAGS_ctltest_force));
  ResetTestFlags();
}

TEST_CASE("ParseArgv joins repeated --label flags with commas", "[services/shortenctl]") {
  absl::SetFlag(&FLAGS_label, "");
  REQUIRE_THAT(Parse({"shorten", "--label", "campaign=spring", "https://a.example/",
                      "--label=channel=sms,region=eu"}),
               IsOk());
  CHECK(absl::GetFlag(FLAGS_label) == "campaign=spring,channel=sms,region=eu");
  absl::SetFlag(&FLAGS_label, "");
}

TEST_CASE("ParseLabelFlags splits KEY=VALUE items and names bad ones", "[services/shortenctl]") {
  absl::StatusOr<std::map<std::string, std::string>> labels =
      ParseLabelFlags("campaign=spring-sale, channel=sms,,empty=");
  REQUIRE_THAT(labels, IsOk());
  CHECK(*labels == std::map<std::string, std::string>{
                       {"campaign", "spring-sale"}, {"channel", "sms"}, {"empty", ""}});
  CHECK(ParseLabelFlags("")->empty());
  CHECK_THAT(ParseLabelFlags("campaign"),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "--label: expected KEY=VALUE, got \"campaign\""));
  CHECK_THAT(ParseLabelFlags("a=1,a=2"), HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                                           "--label: key \"a\" given twice"));
  // The label rule is the server's: passed on as given.
  CHECK(ParseLabelFlags("Bad Key=X")->count("Bad Key") == 1);
}

TEST_CASE("LabelFilter writes one quoted condition per label, joined with AND",
          "[services/shortenctl]") {
  CHECK(LabelFilter({{"campaign", "spring-sale"}}) == "labels.campaign = \"spring-sale\"");
  CHECK(LabelFilter({{"a", "1"}, {"b", "x\"y\\"}}) ==
        "labels.a = \"1\" AND labels.b = \"x\\\"y\\\\\"");
}

TEST_CASE("BuildListLinksRequest joins --filter and --label and checks --page_size",
          "[services/shortenctl]") {
  ListFlags flags;
  auto plain = BuildListLinksRequest(flags, {}, "");
  REQUIRE_THAT(plain, IsOk());
  CHECK(plain->filter().empty());
  CHECK(plain->page_size() == 0);
  CHECK(plain->order_by().empty());
  CHECK(plain->tenant().empty());

  flags.filter = " state = ACTIVE ";
  flags.order_by = "click_count desc ";
  flags.page_size = "250";
  flags.page_token = " tok ";
  auto full = BuildListLinksRequest(flags, {{"campaign", "spring"}}, " acme ");
  REQUIRE_THAT(full, IsOk());
  CHECK(full->filter() == "state = ACTIVE AND labels.campaign = \"spring\"");
  CHECK(full->order_by() == "click_count desc");
  CHECK(full->page_size() == 250);
  CHECK(full->page_token() == "tok");
  CHECK(full->tenant() == "acme");
  flags.filter.clear();
  CHECK(BuildListLinksRequest(flags, {{"campaign", "spring"}}, "")->filter() ==
        "labels.campaign = \"spring\"");

  for (const char* bad : {"0", "1001", "-5", "ten", "1.5", " "}) {
    INFO(bad);
    flags.page_size = bad;
    CHECK_THAT(BuildListLinksRequest(flags, {}, ""),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                 "--page_size must be a whole number from 1 to 1000"));
  }
}

TEST_CASE("BuildUpdateLinkRequest names in the mask exactly the flags given",
          "[services/shortenctl]") {
  const absl::Time now = absl::FromUnixSeconds(1800000000);
  UpdateFlags update;
  ShortenFlags shorten;
  CHECK_THAT(BuildUpdateLinkRequest("abc", update, shorten, false, {}, now),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "update needs a change"));
  update.url = "https://example.com/new";
  shorten.expire = "7d";
  shorten.redirect = "307";
  auto request = BuildUpdateLinkRequest("abc", update, shorten, false, {{"campaign", "x"}}, now);
  REQUIRE_THAT(request, IsOk());
  CHECK(request->link().code() == "abc");
  CHECK(request->link().long_url() == "https://example.com/new");
  CHECK(grpcutil::FromProtoTimestamp(request->link().expire_time()) == now + absl::Hours(24 * 7));
  CHECK(request->link().redirect_type() == v1::REDIRECT_TYPE_TEMPORARY);
  CHECK(request->link().labels().at("campaign") == "x");
  CHECK(std::vector<std::string>(request->update_mask().paths().begin(),
                                 request->update_mask().paths().end()) ==
        std::vector<std::string>{"long_url", "expire_time", "redirect_type", "labels"});

  // never clears the expiry; --max_clicks=0 given removes the budget.
  UpdateFlags none;
  ShortenFlags clear;
  clear.expire = "never";
  clear.max_clicks = 0;
  auto cleared = BuildUpdateLinkRequest("abc", none, clear, true, {}, now);
  REQUIRE_THAT(cleared, IsOk());
  CHECK_FALSE(cleared->link().has_expire_time());
  CHECK(std::vector<std::string>(cleared->update_mask().paths().begin(),
                                 cleared->update_mask().paths().end()) ==
        std::vector<std::string>{"expire_time", "max_clicks"});
  none.clear_labels = true;
  auto unlabelled = BuildUpdateLinkRequest("abc", none, ShortenFlags{}, false, {}, now);
  REQUIRE_THAT(unlabelled, IsOk());
  CHECK(unlabelled->update_mask().paths(0) == "labels");
  CHECK(unlabelled->link().labels().empty());
  CHECK_THAT(BuildUpdateLinkRequest("abc", none, ShortenFlags{}, false, {{"a", "b"}}, now),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "--label and --clear_labels do not go together"));
  ShortenFlags bad;
  bad.redirect = "303";
  CHECK_THAT(BuildUpdateLinkRequest("abc", update, bad, false, {}, now),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--redirect"));
}

TEST_CASE("ParseArgv treats - as an argument and everything after -- as arguments",
          "[services/shortenctl]") {
  absl::StatusOr<CommandLine> parsed = Parse({"batch", "-", "--", "--not-a-flag"});
  REQUIRE_THAT(parsed, IsOk());
  CHECK(parsed->positional == std::vector<std::string>{"batch", "-", "--not-a-flag"});
}

TEST_CASE("ParseArgv recognises --help and -h", "[services/shortenctl]") {
  CHECK(Parse({"--help"}).value().help);
  CHECK(Parse({"resolve", "-h"}).value().help);
  CHECK_FALSE(Parse({"resolve", "abc"}).value().help);
}

TEST_CASE("ParseArgv rejects unknown flags, missing and bad values", "[services/shortenctl]") {
  ResetTestFlags();
  CHECK_THAT(Parse({"--bogus", "resolve", "abc"}),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "unknown flag --bogus"));
  CHECK_THAT(
      Parse({"resolve", "abc", "--ctltest_alias"}),
      HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--ctltest_alias needs a value"));
  CHECK_THAT(Parse({"--ctltest_timeout=soon", "resolve", "abc"}),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--ctltest_timeout"));
  CHECK_THAT(Parse({"--ctltest_force=maybe"}),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--ctltest_force"));
  // --no applies to booleans only; abseil's own flags are not ours.
  CHECK_THAT(Parse({"--noctltest_alias"}),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "unknown flag"));
  CHECK(absl::GetFlag(FLAGS_ctltest_timeout) == absl::Seconds(5));
}

TEST_CASE("usage lines name the command's arguments", "[services/shortenctl]") {
  CHECK(UsageLine("shorten").find("shorten URL") != std::string::npos);
  CHECK(UsageLine("resolve") == "usage: shortenctl resolve CODE");
  CHECK(
      UsageLine("frob").find("shorten|batch|resolve|get|update|list|qr|revoke|delete|stats|keys") !=
      std::string::npos);
  CHECK(UsageLine("qr").find("qr CODE -o FILE|-") != std::string::npos);
  CHECK(UsageLine("frob").find("--api_key_file=PATH") != std::string::npos);
  CHECK(UsageLine("keys create").find("--name=N --scopes=S1,S2") != std::string::npos);
  CHECK(UsageLine("keys revoke") == "usage: shortenctl keys revoke ID");
  CHECK(UsageLine("keys").find("keys list") != std::string::npos);
  CHECK(UsageText().find("keys create") != std::string::npos);
  CHECK(UsageText().find("SHORTENER_API_KEY") != std::string::npos);
  CHECK(HelpText().find("--ctltest_timeout=5s") != std::string::npos);
}

}  // namespace
}  // namespace shortener::ctl
