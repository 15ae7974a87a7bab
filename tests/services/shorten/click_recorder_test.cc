// ClickRecorder over the in-memory link store and the in-memory click store,
// each behind its fault-injecting wrapper: validation, code resolution
// (generated codes, aliases, unknown codes skipped), classification and
// visit fields, refused and skipped events, exactly once on retry (also of
// a batch the store failed), store and look-up errors, places from the
// GeoIP databases.
#include "services/shorten/click_recorder.h"

#include <catch2/catch.hpp>
#include <future>
#include <memory>

#include "absl/strings/str_cat.h"
#include "lib/clicks/click_batch_limits.h"
#include "lib/clicks/in_memory_click_store.h"
#include "lib/idalloc/segment_source.h"
#include "lib/store/in_memory_link_store.h"
#include "tests/support/fault_plan.h"
#include "tests/support/faulty_click_store.h"
#include "tests/support/faulty_link_store.h"
#include "tests/support/status_matchers.h"
#include "tests/support/test_geoip_db.h"

namespace shortener::service {
namespace {

using shortener::testing::FaultPlan;
using shortener::testing::FaultyClickStore;
using shortener::testing::FaultyLinkStore;
using shortener::testing::HasCode;
using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;

struct Fixture {
  explicit Fixture(ClickRecorderOptions options = {}) {
    codec::CodecOptions codec_options;
    codec_options.secret = std::string(32, 'k');
    codec = std::make_unique<codec::ShortCodec>(*codec::ShortCodec::Create(codec_options));
    policy = std::make_unique<url::UrlPolicy>(url::UrlPolicyOptions{});
    source.AddSequence("links", 1);
    ids = std::make_unique<idalloc::SegmentIdAllocator>(&source, idalloc::IdAllocatorOptions{});
    committer = std::make_unique<store::GroupCommitter>(&links, store::GroupCommitOptions{});
    reads = std::make_unique<store::ReadBatcher>(&links, store::ReadBatchOptions{});
    ShortenerOptions shortener_options;
    shortener_options.base_url = "https://sho.rt/";
    shortener = std::make_unique<Shortener>(codec.get(), policy.get(), ids.get(), &links,
                                            committer.get(), reads.get(), &pool, shortener_options);
    recorder = std::make_unique<ClickRecorder>(shortener.get(), &faulty_clicks, options);
  }
  ShortenOutput Shorten(const std::string& url, const std::string& alias = "") {
    ShortenInput in;
    in.long_url = url;
    in.custom_alias = alias;
    std::promise<absl::StatusOr<ShortenOutput>> p;
    shortener->Shorten(in, absl::Now() + absl::Seconds(5),
                       [&p](absl::StatusOr<ShortenOutput> out) { p.set_value(std::move(out)); });
    absl::StatusOr<ShortenOutput> out = p.get_future().get();
    REQUIRE_THAT(out, IsOk());
    return *out;
  }

  std::unique_ptr<codec::ShortCodec> codec;
  std::unique_ptr<url::UrlPolicy> policy;
  idalloc::InMemorySegmentSource source;
  std::unique_ptr<idalloc::SegmentIdAllocator> ids;
  store::InMemoryLinkStore store;
  FaultPlan link_faults;
  FaultyLinkStore links{&store, &link_faults};
  std::unique_ptr<store::GroupCommitter> committer;
  std::unique_ptr<store::ReadBatcher> reads;
  ThreadPool pool{2};
  std::unique_ptr<Shortener> shortener;
  clicks::InMemoryClickStore clicks;
  FaultPlan click_faults;
  FaultyClickStore faulty_clicks{&clicks, &click_faults};
  std::unique_ptr<ClickRecorder> recorder;
};

// Human clicks the click store counted for `link_id`.
int64_t HumanTotal(Fixture& f, int64_t link_id) {
  absl::StatusOr<int64_t> total = f.clicks.HumanTotal(link_id);
  REQUIRE_THAT(total, IsOk());
  return *total;
}

// "index: reason" per refused event, for messages that show what differs.
std::vector<std::string> Lines(const std::vector<RefusedClick>& refused) {
  std::vector<std::string> out;
  for (const RefusedClick& r : refused) out.push_back(absl::StrCat(r.index, ": ", r.reason));
  return out;
}

ClickInput Event(const std::string& code, const char* ua =
                                              "Mozilla/5.0 (iPhone; CPU iPhone OS "
                                              "17_4 like Mac OS X) AppleWebKit/605.1.15 "
                                              "(KHTML, like Gecko) Version/17.4 "
                                              "Mobile/15E148 Safari/604.1") {
  ClickInput e;
  e.code = code;
  e.time = absl::FromUnixSeconds(1893456000);
  e.client_ip = "198.51.100.23";
  e.user_agent = ua;
  e.referer = "https://t.co/x";
  e.http_status = 302;
  return e;
}

TEST_CASE("click events become rows for their links and unknown codes are skipped",
          "[services/shorten][clicks]") {
  Fixture f;
  ShortenOutput generated = f.Shorten("https://example.com/a");
  ShortenOutput aliased = f.Shorten("https://example.com/b", "sale");
  RecordClicksInput in;
  in.batch_id = "b1";
  in.events = {Event(generated.link.code), Event("sale"), Event("nosuchalias"),
               Event(generated.link.code, "curl/8.5.0")};
  absl::StatusOr<RecordClicksOutput> out = f.recorder->Record(in);
  REQUIRE_THAT(out, IsOk());
  CHECK(out->accepted == 3);
  CHECK(out->skipped == 1);
  CHECK(out->refused.empty());
  CHECK_FALSE(out->duplicate);
  const std::vector<clicks::ClickRow> recorded = f.clicks.Visits();
  REQUIRE(recorded.size() == 3);
  const clicks::ClickRow& first = recorded[0];
  CHECK(first.link_id == generated.link.link.id);
  CHECK(first.ip == "198.51.100.0");
  CHECK(first.client_id == clicks::ClientId("198.51.100.23", Event("x").user_agent));
  CHECK(first.referrer_host == "t.co");
  CHECK(first.device == "mobile");
  CHECK_FALSE(first.bot);
  CHECK(first.time == absl::FromUnixSeconds(1893456000));
  CHECK(recorded[1].link_id == aliased.link.link.id);
  CHECK(recorded[2].bot);
  CHECK(recorded[2].device == "bot");
  CHECK(HumanTotal(f, generated.link.link.id) == 1);
  CHECK(HumanTotal(f, aliased.link.link.id) == 1);

  // The same batch again: nothing counted.
  out = f.recorder->Record(in);
  REQUIRE_THAT(out, IsOk());
  CHECK(out->duplicate);
  CHECK(out->accepted == 0);
  CHECK(out->skipped == 1);
  CHECK(f.clicks.Visits().size() == 3);
  CHECK(HumanTotal(f, generated.link.link.id) == 1);
}

TEST_CASE("click recorder stats count batches by outcome and events by what became of them",
          "[services/shorten][clicks]") {
  Fixture f;
  ShortenOutput generated = f.Shorten("https://example.com/a");
  RecordClicksInput in;
  in.batch_id = "b1";
  ClickInput malformed = Event(generated.link.code);
  malformed.http_status = 200;
  in.events = {Event(generated.link.code), Event("nosuchalias"), malformed};
  REQUIRE_THAT(f.recorder->Record(in), IsOk());
  REQUIRE_THAT(f.recorder->Record(in), IsOk());  // a retry: duplicate
  RecordClicksInput empty;
  empty.batch_id = "b2";
  REQUIRE_THAT(f.recorder->Record(empty), HasCode(absl::StatusCode::kInvalidArgument));
  const ClickRecorder::Stats stats = f.recorder->GetStats();
  CHECK(stats.batches == 1);
  CHECK(stats.duplicates == 1);
  CHECK(stats.failed == 1);
  CHECK(stats.accepted == 1);
  CHECK(stats.skipped == 2);  // once per answer: the retry skips it again
  CHECK(stats.refused == 2);
  CHECK(stats.batch_events.count() == 2);
  CHECK(stats.batch_events.sum() == 6);
}

TEST_CASE("click options reach the rows and the store", "[services/shorten][clicks]") {
  RecordClicksInput in;
  in.batch_id = "b1";
  SECTION("keep_full_ips stores the address as received") {
    ClickRecorderOptions options;
    options.keep_full_ips = true;
    Fixture f(options);
    in.events = {Event(f.Shorten("https://example.com/a").link.code)};
    REQUIRE_THAT(f.recorder->Record(in), IsOk());
    REQUIRE(f.clicks.Visits().size() == 1);
    CHECK(f.clicks.Visits()[0].ip == "198.51.100.23");
  }
  SECTION("without record_visits the clicks are counted but no visit is stored") {
    ClickRecorderOptions options;
    options.record_visits = false;
    Fixture f(options);
    ShortenOutput link = f.Shorten("https://example.com/a");
    in.events = {Event(link.link.code)};
    absl::StatusOr<RecordClicksOutput> out = f.recorder->Record(in);
    REQUIRE_THAT(out, IsOk());
    CHECK(out->accepted == 1);
    CHECK(f.clicks.Visits().empty());
    CHECK(HumanTotal(f, link.link.link.id) == 1);
  }
  SECTION("with City and ASN databases, visits and rollups get country, region, city, network") {
    auto geoip = shortener::testing::TestGeoIpDb::Create();
    INFO(geoip.status().ToString());
    REQUIRE(geoip.ok());
    auto city = geoip::GeoDbHolder::Open((*geoip)->city_path(), geoip::GeoRole::kLocation);
    auto asn = geoip::GeoDbHolder::Open((*geoip)->asn_path(), geoip::GeoRole::kNetwork);
    REQUIRE_THAT(city, IsOk());
    REQUIRE_THAT(asn, IsOk());
    const geoip::GeoLocator geo(*std::move(city), *std::move(asn));
    ClickRecorderOptions options;
    options.geo = &geo;
    Fixture f(options);
    ShortenOutput link = f.Shorten("https://example.com/a");
    ClickInput other = Event(link.link.code);
    // Looked up from the full address: 192.0.2.200 is in 192.0.2.128/25
    // (registered_country DE only); its anonymised 192.0.2.0 would be Monaco.
    other.client_ip = "192.0.2.200";
    ClickInput v6 = Event(link.link.code);
    v6.client_ip = "2001:db8:1::7";
    in.events = {Event(link.link.code), Event(link.link.code), other, v6};
    REQUIRE_THAT(f.recorder->Record(in), IsOk());
    const std::vector<clicks::ClickRow> rows = f.clicks.Visits();
    REQUIRE(rows.size() == 4);
    CHECK(rows[0].country == "US");
    CHECK(rows[0].region == "US-MO");
    CHECK(rows[0].city == "Springfield (US-MO)");
    CHECK(rows[0].network == "AS4200000000");
    CHECK(rows[2].ip == "192.0.2.0");
    CHECK(rows[2].country == "DE");
    CHECK(rows[2].region.empty());
    CHECK(rows[2].city.empty());
    CHECK(rows[2].network.empty());  // AS0 in the ASN database: none
    CHECK(rows[3].city == "T\xC5\x8Dky\xC5\x8D (JP-13)");
    CHECK(rows[3].network == "AS64501 Beispiel GmbH & Co. KG");
    absl::StatusOr<clicks::ClickStats> stats =
        f.clicks.Stats(link.link.link.id, absl::FromUnixSeconds(1893456000),
                       absl::FromUnixSeconds(1893456000 + 86400), clicks::StatsGranularity::kDay);
    REQUIRE_THAT(stats, IsOk());
    using Top = std::vector<std::pair<std::string, int64_t>>;
    auto pairs = [](const std::vector<clicks::CountedValue>& list) {
      Top out;
      for (const clicks::CountedValue& v : list) out.emplace_back(v.value, v.clicks);
      return out;
    };
    CHECK(pairs(stats->top_countries) == Top{{"US", 2}, {"DE", 1}, {"JP", 1}});
    CHECK(pairs(stats->top_regions) == Top{{"US-MO", 2}, {"JP-13", 1}});
    CHECK(pairs(stats->top_cities) ==
          Top{{"Springfield (US-MO)", 2}, {"T\xC5\x8Dky\xC5\x8D (JP-13)", 1}});
    CHECK(pairs(stats->top_networks) ==
          Top{{"AS4200000000", 2}, {"AS64501 Beispiel GmbH & Co. KG", 1}});
  }
}

TEST_CASE("malformed click batches and store failures are errors", "[services/shorten][clicks]") {
  ClickRecorderOptions options;
  options.max_events = 3;
  Fixture f(options);
  RecordClicksInput in;
  in.events = {Event("abc")};
  CHECK_THAT(f.recorder->Record(in), HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                                       "batch_id: must be 1 to 128 bytes, got 0"));
  in.batch_id = std::string(129, 'b');
  CHECK_THAT(f.recorder->Record(in), HasCode(absl::StatusCode::kInvalidArgument));
  // Refused as a whole: the store never saw them.
  CHECK(f.click_faults.calls("Record") == 0);
  in.batch_id = std::string(128, 'b');
  CHECK_THAT(f.recorder->Record(in), IsOk());
  CHECK(f.click_faults.calls("Record") == 1);
  in.batch_id = "b2";
  in.events.clear();
  CHECK_THAT(f.recorder->Record(in), HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                                       "events: must be 1 to 3, got 0"));
  in.events.assign(4, Event("abc"));
  CHECK_THAT(f.recorder->Record(in), HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                                       "events: must be 1 to 3, got 4"));
  CHECK(f.click_faults.calls("Record") == 1);
  in.events.assign(3, Event("abc"));
  f.click_faults.FailNext(1, absl::UnavailableError("record clicks: database unreachable"));
  CHECK_THAT(f.recorder->Record(in), HasCodeAndMessage(absl::StatusCode::kUnavailable,
                                                       "record clicks: database unreachable"));
  f.click_faults.FailNext(1, absl::AbortedError("record clicks: deadlocked 3 times"));
  CHECK_THAT(f.recorder->Record(in), HasCode(absl::StatusCode::kAborted));
  CHECK(f.clicks.BatchCount() == 1);
}

TEST_CASE("by default a batch may hold as many events as the edge puts in one",
          "[services/shorten][clicks]") {
  Fixture f;
  ShortenOutput link = f.Shorten("https://example.com/a");
  RecordClicksInput in;
  in.batch_id = "full";
  in.events.assign(clicks::kMaxClickBatchEvents + 1, Event(link.link.code));
  CHECK_THAT(f.recorder->Record(in), HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                                       "events: must be 1 to 10000, got 10001"));
  in.events.pop_back();
  absl::StatusOr<RecordClicksOutput> out = f.recorder->Record(in);
  REQUIRE_THAT(out, IsOk());
  CHECK(out->accepted == 10000);
  CHECK(f.click_faults.batch_sizes("Record") == std::vector<size_t>{10000});
}

TEST_CASE("a batch the store failed counts once when the edge sends it again",
          "[services/shorten][clicks]") {
  Fixture f;
  ShortenOutput link = f.Shorten("https://example.com/a");
  RecordClicksInput in;
  in.batch_id = "retried";
  in.events = {Event(link.link.code), Event(link.link.code, "\xFF"), Event("nosuchalias"),
               Event(link.link.code)};
  f.click_faults.FailNext(2, absl::UnavailableError("record clicks: database unreachable"),
                          "Record");
  CHECK_THAT(f.recorder->Record(in), HasCode(absl::StatusCode::kUnavailable));
  CHECK_THAT(f.recorder->Record(in), HasCode(absl::StatusCode::kUnavailable));
  CHECK(f.clicks.BatchCount() == 0);
  CHECK(HumanTotal(f, link.link.link.id) == 0);

  // The store is back: the same batch id is recorded once, however often
  // it comes (the edge cannot know whether an answer it lost was a commit).
  absl::StatusOr<RecordClicksOutput> out = f.recorder->Record(in);
  REQUIRE_THAT(out, IsOk());
  CHECK_FALSE(out->duplicate);
  CHECK(out->accepted == 2);
  CHECK(out->skipped == 1);
  REQUIRE(out->refused.size() == 1);
  CHECK(out->refused[0].index == 1);
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<RecordClicksOutput> again = f.recorder->Record(in);
    REQUIRE_THAT(again, IsOk());
    CHECK(again->duplicate);
    CHECK(again->accepted == 0);
    CHECK(again->refused == out->refused);
  }
  CHECK(f.click_faults.calls("Record") == 5);
  CHECK(f.click_faults.batch_sizes("Record") == std::vector<size_t>(5, 2));
  CHECK(HumanTotal(f, link.link.link.id) == 2);
  CHECK(f.clicks.Visits().size() == 2);
}

TEST_CASE("a failed alias look-up fails the batch before anything is recorded",
          "[services/shorten][clicks]") {
  Fixture f;
  ShortenOutput aliased = f.Shorten("https://example.com/b", "sale");
  RecordClicksInput in;
  in.batch_id = "lookup";
  in.events = {Event("sale"), Event("sale")};
  const size_t lookups = f.link_faults.batch_sizes("GetByAliases").size();
  f.link_faults.FailNext(1, absl::UnavailableError("database unreachable"), "GetByAliases");
  CHECK_THAT(f.recorder->Record(in), HasCode(absl::StatusCode::kUnavailable));
  CHECK(f.click_faults.calls("Record") == 0);
  // The batch's one code was looked up once, for both events.
  const std::vector<size_t> sizes = f.link_faults.batch_sizes("GetByAliases");
  REQUIRE(sizes.size() == lookups + 1);
  CHECK(sizes.back() == 1);

  absl::StatusOr<RecordClicksOutput> out = f.recorder->Record(in);
  REQUIRE_THAT(out, IsOk());
  CHECK(out->accepted == 2);
  CHECK(HumanTotal(f, aliased.link.link.id) == 2);
}

TEST_CASE("malformed events are refused one by one and the rest of the batch is recorded",
          "[services/shorten][clicks]") {
  Fixture f;
  ShortenOutput link = f.Shorten("https://example.com/a");
  const std::string code = link.link.code;
  RecordClicksInput in;
  in.batch_id = "b1";
  std::vector<RefusedClick> expected;
  const auto add = [&](ClickInput e, const std::string& reason = "") {
    if (!reason.empty()) expected.push_back({static_cast<int>(in.events.size()), reason});
    in.events.push_back(std::move(e));
  };
  add(Event(code));
  add(Event(code, "\xFF\xFE"), "user_agent: invalid UTF-8 at byte 0 (0xFF)");
  ClickInput e = Event(code);
  e.referer = std::string("https://a.example/\0x", 20);
  add(e, "referer: control character 0x00 at byte 18");
  add(Event(code, std::string(513, 'a').c_str()), "user_agent: 513 bytes, more than 512");
  e = Event(code);
  e.client_ip = "198.51.100.23\r\n";
  add(e, "client_ip: control character 0x0D at byte 13");
  add(Event("!bad!"),
      "code: \"!bad!\" is neither a short code nor an alias ([A-Za-z0-9_-], 1 to 64 characters)");
  add(Event(std::string(65, 'a')),
      "code: \"" + std::string(65, 'a') +
          "\" is neither a short code nor an alias ([A-Za-z0-9_-], 1 to 64 characters)");
  add(Event(""),
      "code: \"\" is neither a short code nor an alias ([A-Za-z0-9_-], 1 to 64 characters)");
  e = Event(code);
  e.time = absl::InvalidArgumentError("time: missing");
  add(e, "time: missing");
  e.time = kEarliestClickTime - absl::Nanoseconds(1);
  add(e,
      "time: 2019-12-31T23:59:59.999999999Z is outside 2020-01-01T00:00:00Z..2100-01-01T00:00:00Z");
  e.time = kLatestClickTime;
  add(e, "time: 2100-01-01T00:00:00Z is outside 2020-01-01T00:00:00Z..2100-01-01T00:00:00Z");
  e = Event(code);
  e.http_status = 200;
  add(e, "http_status: 200 is not a redirect (301, 302, 307 or 308)");
  add(Event("nosuchalias"));                 // well-formed, unknown: skipped
  add(Event(code, "Mozilla/5.0 \xC3\xA9"));  // valid UTF-8: recorded
  e = Event(code);
  e.time = kEarliestClickTime;
  e.http_status = 308;
  add(e);

  absl::StatusOr<RecordClicksOutput> out = f.recorder->Record(in);
  REQUIRE_THAT(out, IsOk());
  CHECK(Lines(out->refused) == Lines(expected));
  CHECK(out->accepted == 3);
  CHECK(out->skipped == 1);
  CHECK(static_cast<size_t>(out->accepted + out->skipped) + out->refused.size() ==
        in.events.size());
  const std::vector<clicks::ClickRow> recorded = f.clicks.Visits();
  REQUIRE(recorded.size() == 3);
  for (const clicks::ClickRow& row : recorded) CHECK(row.link_id == link.link.link.id);

  // The retry is a duplicate and refuses exactly the same events.
  out = f.recorder->Record(in);
  REQUIRE_THAT(out, IsOk());
  CHECK(out->duplicate);
  CHECK(out->accepted == 0);
  CHECK(Lines(out->refused) == Lines(expected));
}

TEST_CASE("a code of the generated shape with a wrong check character is skipped, not refused",
          "[services/shorten][clicks]") {
  Fixture f;
  std::string code = f.Shorten("https://example.com/a").link.code;
  code.back() = code.back() == 'A' ? 'B' : 'A';
  RecordClicksInput in;
  in.batch_id = "b1";
  in.events = {Event(code)};
  absl::StatusOr<RecordClicksOutput> out = f.recorder->Record(in);
  REQUIRE_THAT(out, IsOk());
  CHECK(out->refused.empty());
  CHECK(out->skipped == 1);
}

TEST_CASE("a batch of nothing but refused events records its id", "[services/shorten][clicks]") {
  Fixture f;
  RecordClicksInput in;
  in.batch_id = "b1";
  in.events = {Event("abc", "\xC0\x80"), Event("!")};
  absl::StatusOr<RecordClicksOutput> out = f.recorder->Record(in);
  REQUIRE_THAT(out, IsOk());
  CHECK(out->refused.size() == 2);
  CHECK(f.clicks.BatchCount() == 1);
  CHECK(f.clicks.Visits().empty());
  CHECK(f.recorder->Record(in)->duplicate);
}

TEST_CASE("a batch id that is not clean text refuses the batch and records nothing",
          "[services/shorten][clicks]") {
  Fixture f;
  RecordClicksInput in;
  in.events = {Event(f.Shorten("https://example.com/a").link.code)};
  for (const std::string& id : {std::string("b\0", 2), std::string("b\n"), std::string("\xFF")}) {
    in.batch_id = id;
    absl::StatusOr<RecordClicksOutput> out = f.recorder->Record(in);
    CHECK_THAT(out, HasCode(absl::StatusCode::kInvalidArgument));
    CHECK_THAT(std::string(out.status().message()), Catch::StartsWith("batch_id: "));
  }
  CHECK(f.click_faults.calls("Record") == 0);
  CHECK(f.clicks.BatchCount() == 0);
}

}  // namespace
}  // namespace shortener::service
