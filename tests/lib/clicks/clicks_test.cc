// Pure click logic: IP anonymisation, client ids, referrer hosts, hour and
// month buckets, grouping of a batch into hourly counts.
#include "lib/clicks/clicks.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/clicks/click_stats.h"

namespace shortener::clicks {
namespace {

absl::Time At(const char* text) {
  absl::Time t;
  std::string err;
  REQUIRE(absl::ParseTime(absl::RFC3339_full, text, &t, &err));
  return t;
}

TEST_CASE("IPv4 addresses lose their last octet", "[lib/clicks]") {
  CHECK(AnonymizeIp("192.0.2.7") == "192.0.2.0");
  CHECK(AnonymizeIp("255.255.255.255") == "255.255.255.0");
  CHECK(AnonymizeIp("10.0.0.0") == "10.0.0.0");
  CHECK(CanonicalIp("192.0.2.7") == "192.0.2.7");
}

TEST_CASE("every IPv4 address anonymises to its /24", "[lib/clicks]") {
  std::mt19937 rng(7);
  for (int i = 0; i < 10000; ++i) {
    unsigned a = rng() % 256, b = rng() % 256, c = rng() % 256, d = rng() % 256;
    std::string ip = absl::StrCat(a, ".", b, ".", c, ".", d);
    REQUIRE(AnonymizeIp(ip) == absl::StrCat(a, ".", b, ".", c, ".0"));
    REQUIRE(CanonicalIp(ip) == ip);
  }
}

TEST_CASE("IPv6 addresses keep their first 48 bits", "[lib/clicks]") {
  CHECK(AnonymizeIp("2001:db8:1:2:3:4:5:6") == "2001:db8:1::");
  CHECK(AnonymizeIp("2001:DB8:abcd:ffff::1") == "2001:db8:abcd::");
  CHECK(AnonymizeIp("::1") == "::");
  CHECK(CanonicalIp("2001:0db8:0000::0001") == "2001:db8::1");
}

TEST_CASE("IPv4-mapped IPv6 addresses are treated as IPv4", "[lib/clicks]") {
  CHECK(AnonymizeIp("::ffff:192.0.2.7") == "192.0.2.0");
  CHECK(CanonicalIp("::ffff:192.0.2.7") == "192.0.2.7");
}

TEST_CASE("anything but an address literal gives no IP", "[lib/clicks]") {
  for (const char* bad : {"", "example.com", "192.0.2.7:80", "[2001:db8::1]", "fe80::1%eth0",
                          "192.0.2", "192.0.2.256", " 192.0.2.7", "1.2.3.4\n", "2001:db8::1::2",
                          "0123456789012345678901234567890123456789012345678"}) {
    INFO(bad);
    CHECK(AnonymizeIp(bad).empty());
    CHECK(CanonicalIp(bad).empty());
  }
  CHECK(AnonymizeIp(std::string("1.2.3.4\0", 8)).empty());
}

TEST_CASE("the client id is the truncated SHA-256 of ip newline user agent", "[lib/clicks]") {
  // sha256("192.0.2.7\nMozilla/5.0") computed independently with sha256sum.
  CHECK(ClientId("192.0.2.7", "Mozilla/5.0") == "64e356f2a3ddaa16f5b7217def291476");
  CHECK(ClientId("192.0.2.7", "Mozilla/5.0").size() == 32);
  // The full address counts: neighbours in one /24 stay apart.
  CHECK(ClientId("192.0.2.7", "Mozilla/5.0") != ClientId("192.0.2.8", "Mozilla/5.0"));
  CHECK(ClientId("192.0.2.7", "Mozilla/5.0") != ClientId("192.0.2.7", "Mozilla/5.1"));
  // The separator keeps "ab"+"c" apart from "a"+"bc".
  CHECK(ClientId("ab", "c") != ClientId("a", "bc"));
}

TEST_CASE("the referrer host is the lower-case host of an absolute URL", "[lib/clicks]") {
  CHECK(ReferrerHost("https://Example.COM/path?q=1#f") == "example.com");
  CHECK(ReferrerHost("http://user:pw@news.example.org:8080/") == "news.example.org");
  CHECK(ReferrerHost("https://a@b@c.example") == "c.example");
  CHECK(ReferrerHost("https://example.com") == "example.com");
  CHECK(ReferrerHost("https://example.com?x") == "example.com");
  CHECK(ReferrerHost("android-app://com.google.android.gm/") == "com.google.android.gm");
  CHECK(ReferrerHost("http://[2001:DB8::1]:443/x") == "[2001:db8::1]");
  CHECK(ReferrerHost("http://192.0.2.7/") == "192.0.2.7");
}

TEST_CASE("empty relative or garbage referers give no host", "[lib/clicks]") {
  for (const char* bad :
       {"", "example.com", "/local/path", "://example.com", "1http://example.com",
        "ht tp://example.com", "https://", "https:///path", "https://exa mple.com/",
        "https://example.com\r\nX: y", "https://[::1", "https://[example]/", "https://[::1]x/",
        "https://ex<ample>.com", "javascript:alert(1)"}) {
    INFO(bad);
    CHECK(ReferrerHost(bad).empty());
  }
  CHECK(ReferrerHost(absl::StrCat("https://", std::string(254, 'a'), "/")).empty());
  CHECK(ReferrerHost(absl::StrCat("https://", std::string(253, 'a'), "/")).size() == 253);
}

TEST_CASE("times are bucketed by UTC hour and month", "[lib/clicks]") {
  CHECK(TruncateToHour(At("2026-11-22T08:59:59.999999Z")) == At("2026-11-22T08:00:00Z"));
  CHECK(TruncateToHour(At("2026-11-22T09:00:00Z")) == At("2026-11-22T09:00:00Z"));
  CHECK(TruncateToHour(At("2026-11-22T09:30:00+05:30")) == At("2026-11-22T04:00:00Z"));
  CHECK(TruncateToHour(At("1969-12-31T23:30:00Z")) == At("1969-12-31T23:00:00Z"));
  CHECK(MonthStart(At("2026-11-22T08:59:59Z")) == At("2026-11-01T00:00:00Z"));
  CHECK(MonthStart(At("2026-12-01T00:30:00+01:00")) == At("2026-11-01T00:00:00Z"));
  CHECK(MonthStart(At("2024-02-29T23:59:59Z")) == At("2024-02-01T00:00:00Z"));
}

TEST_CASE("a batch groups into one sorted count per link hour and bot flag", "[lib/clicks]") {
  auto row = [](int64_t link, const char* time, bool bot) {
    ClickRow r;
    r.link_id = link;
    r.time = At(time);
    r.bot = bot;
    return r;
  };
  std::vector<ClickRow> rows = {
      row(2, "2026-11-22T08:10:00Z", false), row(1, "2026-11-22T08:59:00Z", false),
      row(2, "2026-11-22T08:20:00Z", false), row(2, "2026-11-22T08:20:00Z", true),
      row(2, "2026-11-22T09:00:00Z", false), row(1, "2026-11-22T08:00:00Z", false),
  };
  std::vector<HourlyCount> want = {
      {1, At("2026-11-22T08:00:00Z"), false, 2},
      {2, At("2026-11-22T08:00:00Z"), false, 2},
      {2, At("2026-11-22T08:00:00Z"), true, 1},
      {2, At("2026-11-22T09:00:00Z"), false, 1},
  };
  CHECK(GroupHourly(rows) == want);
  CHECK(GroupHourly({}).empty());
}

TEST_CASE("grouping keeps every click of a random batch", "[lib/clicks]") {
  std::mt19937 rng(11);
  std::vector<ClickRow> rows(5000);
  for (ClickRow& r : rows) {
    r.link_id = rng() % 50;
    r.time = absl::FromUnixSeconds(1700000000 + rng() % (86400 * 3));
    r.bot = rng() % 5 == 0;
  }
  std::vector<HourlyCount> grouped = GroupHourly(rows);
  int64_t total = 0;
  for (size_t i = 0; i < grouped.size(); ++i) {
    total += grouped[i].count;
    REQUIRE(grouped[i].hour == TruncateToHour(grouped[i].hour));
    if (i > 0) {
      REQUIRE(std::tie(grouped[i - 1].link_id, grouped[i - 1].hour, grouped[i - 1].bot) <
              std::tie(grouped[i].link_id, grouped[i].hour, grouped[i].bot));
    }
  }
  CHECK(total == 5000);
}

TEST_CASE("summing batches' hourly counts equals grouping all their rows", "[lib/clicks]") {
  std::mt19937 rng(12);
  std::vector<ClickRow> rows(3000);
  for (ClickRow& r : rows) {
    r.link_id = rng() % 20;
    r.time = absl::FromUnixSeconds(1700000000 + rng() % (3600 * 5));
    r.bot = rng() % 4 == 0;
  }
  const absl::Span<const ClickRow> all(rows);
  const std::vector<HourlyCount> a = GroupHourly(all.subspan(0, 1000));
  const std::vector<HourlyCount> b = GroupHourly(all.subspan(1000, 1500));
  const std::vector<HourlyCount> c = GroupHourly(all.subspan(2500));
  const std::vector<HourlyCount>* batches[] = {&a, &b, &c};
  CHECK(SumHourlyCounts(batches) == GroupHourly(rows));
  const std::vector<HourlyCount>* one[] = {&b};
  CHECK(SumHourlyCounts(one) == b);
}

TEST_CASE("a click event becomes a row with derived visit fields", "[lib/clicks]") {
  useragent::ClientInfo client;
  client.browser = "Safari";
  client.browser_major = 17;
  client.os = "iOS";
  client.os_version = "17.4";
  client.device = useragent::DeviceType::kMobile;
  ClickEvent event;
  event.link_id = 42;
  event.time = At("2026-11-22T08:30:00Z");
  event.client_ip = "2001:db8:1:2::7";
  event.user_agent = "Mozilla/5.0 (iPhone)";
  event.referer = "https://t.co/abc";
  ClickRow row = MakeClickRow(event, client, false);
  CHECK(row.link_id == 42);
  CHECK(row.time == event.time);
  CHECK_FALSE(row.bot);
  CHECK(row.client_id == ClientId("2001:db8:1:2::7", "Mozilla/5.0 (iPhone)"));
  CHECK(row.ip == "2001:db8:1::");
  CHECK(row.browser == "Safari");
  CHECK(row.browser_major == 17);
  CHECK(row.os == "iOS");
  CHECK(row.os_version == "17.4");
  CHECK(row.device == "mobile");
  CHECK(row.referrer_host == "t.co");
  CHECK(row.country.empty());
  CHECK(MakeClickRow(event, client, true).ip == "2001:db8:1:2::7");
  // A bot either way is a bot both ways.
  client.bot = true;
  CHECK(MakeClickRow(event, client, false).device == "bot");
  client.bot = false;
  client.device = useragent::DeviceType::kBot;
  CHECK(MakeClickRow(event, client, false).bot);
  // Garbage in the event gives empty fields, never a failure.
  event.client_ip = "unknown";
  event.referer = "not a url";
  row = MakeClickRow(event, useragent::ClientInfo{}, false);
  CHECK(row.ip.empty());
  CHECK(row.referrer_host.empty());
  CHECK(row.device == "desktop");
  CHECK(row.client_id.size() == 32);
}

TEST_CASE("every device type has its column value", "[lib/clicks]") {
  CHECK(DeviceColumn(useragent::DeviceType::kDesktop) == "desktop");
  CHECK(DeviceColumn(useragent::DeviceType::kMobile) == "mobile");
  CHECK(DeviceColumn(useragent::DeviceType::kTablet) == "tablet");
  CHECK(DeviceColumn(useragent::DeviceType::kBot) == "bot");
}

TEST_CASE("ResolveStatsRange applies the defaults and refuses empty ranges", "[lib/clicks]") {
  const absl::Time now = absl::FromUnixSeconds(1893456000) + absl::Minutes(17);
  StatsRange range = ResolveStatsRange(std::nullopt, std::nullopt, std::nullopt, now).value();
  CHECK(range.granularity == StatsGranularity::kDay);
  CHECK(range.end == now);
  CHECK(range.start == now - absl::Hours(7 * 24));

  range = ResolveStatsRange(std::nullopt, std::nullopt, StatsGranularity::kHour, now).value();
  CHECK(range.start == now - absl::Hours(24));

  const absl::Time end = now - absl::Hours(100);
  range = ResolveStatsRange(std::nullopt, end, std::nullopt, now).value();
  CHECK(range.end == end);
  CHECK(range.start == end - absl::Hours(7 * 24));

  for (const absl::Time start : {now, now + absl::Seconds(1)}) {
    absl::StatusOr<StatsRange> bad = ResolveStatsRange(start, now, std::nullopt, now);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(bad.status().message()), Catch::StartsWith("start_time:"));
  }
  // A start after now with no end: end is now, so it is refused too.
  CHECK_FALSE(ResolveStatsRange(now + absl::Hours(1), std::nullopt, std::nullopt, now).ok());
}

TEST_CASE("ResolveStatsRange serves hours of the last 35 days only", "[lib/clicks]") {
  // 2030-01-01T00:17:00Z: hours go back to 2029-11-27T00:00:00Z.
  const absl::Time now = absl::FromUnixSeconds(1893456000) + absl::Minutes(17);
  const absl::Time oldest = absl::FromUnixSeconds(1893456000) - absl::Hours(35 * 24);
  CHECK(ResolveStatsRange(oldest, oldest + absl::Hours(24), StatsGranularity::kHour, now).ok());
  absl::StatusOr<StatsRange> old =
      ResolveStatsRange(oldest - absl::Seconds(1), oldest, StatsGranularity::kHour, now);
  REQUIRE_FALSE(old.ok());
  CHECK(old.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(old.status().message() ==
        "start_time: statistics by hour go back to 2029-11-27T00:00:00Z (35 days); ask by day for "
        "older ones");
  // By day, any range.
  CHECK(
      ResolveStatsRange(oldest - absl::Hours(24 * 400), oldest, StatsGranularity::kDay, now).ok());
}

}  // namespace
}  // namespace shortener::clicks
