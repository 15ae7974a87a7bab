// ClickRecorder over the in-memory link store and a fake click store:
// validation, code resolution (generated codes, aliases, unknown codes
// skipped), classification and visit fields, duplicates, store errors.
#include "services/shorten/click_recorder.h"

#include <catch2/catch.hpp>
#include <future>
#include <memory>
#include <set>

#include "lib/idalloc/segment_source.h"
#include "lib/store/in_memory_link_store.h"
#include "tests/support/status_matchers.h"

namespace shortener::service {
namespace {

using shortener::testing::HasCode;
using shortener::testing::IsOk;

// A click store in memory: remembers batch ids and the rows of each.
struct FakeClickStore {
  absl::StatusOr<clicks::RecordOutcome> Record(const std::string& batch_id,
                                               absl::Span<const clicks::ClickRow> rows,
                                               bool record_visits) {
    if (!fail.ok()) return fail;
    clicks::RecordOutcome outcome;
    if (!batches.insert(batch_id).second) {
      outcome.duplicate = true;
      return outcome;
    }
    recorded.assign(rows.begin(), rows.end());
    visits = record_visits;
    outcome.counted = static_cast<int64_t>(rows.size());
    return outcome;
  }
  absl::Status fail;
  std::set<std::string> batches;
  std::vector<clicks::ClickRow> recorded;
  bool visits = false;
};

struct Fixture {
  explicit Fixture(ClickRecorderOptions options = {}) {
    codec::CodecOptions codec_options;
    codec_options.secret = std::string(32, 'k');
    codec = std::make_unique<codec::ShortCodec>(*codec::ShortCodec::Create(codec_options));
    policy = std::make_unique<url::UrlPolicy>(url::UrlPolicyOptions{});
    source.AddSequence("links", 1);
    ids = std::make_unique<idalloc::SegmentIdAllocator>(&source, idalloc::IdAllocatorOptions{});
    committer = std::make_unique<store::GroupCommitter>(&store, store::GroupCommitOptions{});
    reads = std::make_unique<store::ReadBatcher>(&store, store::ReadBatchOptions{});
    ShortenerOptions shortener_options;
    shortener_options.base_url = "https://sho.rt/";
    shortener = std::make_unique<Shortener>(codec.get(), policy.get(), ids.get(), &store,
                                            committer.get(), reads.get(), &pool, shortener_options);
    recorder = std::make_unique<ClickRecorder>(
        shortener.get(),
        [this](const std::string& id, absl::Span<const clicks::ClickRow> rows, bool visits) {
          return clicks.Record(id, rows, visits);
        },
        options);
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
  std::unique_ptr<store::GroupCommitter> committer;
  std::unique_ptr<store::ReadBatcher> reads;
  ThreadPool pool{2};
  std::unique_ptr<Shortener> shortener;
  FakeClickStore clicks;
  std::unique_ptr<ClickRecorder> recorder;
};

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
  return e;
}

TEST_CASE("click events become rows for their links and unknown codes are skipped",
          "[service][clicks]") {
  Fixture f;
  ShortenOutput generated = f.Shorten("https://example.com/a");
  ShortenOutput aliased = f.Shorten("https://example.com/b", "sale");
  RecordClicksInput in;
  in.batch_id = "b1";
  in.events = {Event(generated.link.code), Event("sale"), Event("nosuchalias"), Event("!bad!"),
               Event(generated.link.code, "curl/8.5.0")};
  in.events.push_back(Event(generated.link.code));
  in.events.back().time.reset();  // no time: skipped
  absl::StatusOr<RecordClicksOutput> out = f.recorder->Record(in);
  REQUIRE_THAT(out, IsOk());
  CHECK(out->accepted == 3);
  CHECK(out->skipped == 3);
  CHECK_FALSE(out->duplicate);
  REQUIRE(f.clicks.recorded.size() == 3);
  CHECK(f.clicks.visits);
  const clicks::ClickRow& first = f.clicks.recorded[0];
  CHECK(first.link_id == generated.link.link.id);
  CHECK(first.ip == "198.51.100.0");
  CHECK(first.client_id == clicks::ClientId("198.51.100.23", Event("x").user_agent));
  CHECK(first.referrer_host == "t.co");
  CHECK(first.device == "mobile");
  CHECK_FALSE(first.bot);
  CHECK(f.clicks.recorded[1].link_id == aliased.link.link.id);
  CHECK(f.clicks.recorded[2].bot);
  CHECK(f.clicks.recorded[2].device == "bot");

  // The same batch again: nothing counted.
  out = f.recorder->Record(in);
  REQUIRE_THAT(out, IsOk());
  CHECK(out->duplicate);
  CHECK(out->accepted == 0);
}

TEST_CASE("click options reach the rows and the store", "[service][clicks]") {
  ClickRecorderOptions options;
  options.record_visits = false;
  options.keep_full_ips = true;
  Fixture f(options);
  ShortenOutput link = f.Shorten("https://example.com/a");
  RecordClicksInput in;
  in.batch_id = "b1";
  in.events = {Event(link.link.code)};
  REQUIRE_THAT(f.recorder->Record(in), IsOk());
  CHECK_FALSE(f.clicks.visits);
  REQUIRE(f.clicks.recorded.size() == 1);
  CHECK(f.clicks.recorded[0].ip == "198.51.100.23");
}

TEST_CASE("malformed click batches and store failures are errors", "[service][clicks]") {
  ClickRecorderOptions options;
  options.max_events = 3;
  Fixture f(options);
  RecordClicksInput in;
  in.events = {Event("abc")};
  CHECK_THAT(f.recorder->Record(in), HasCode(absl::StatusCode::kInvalidArgument));
  in.batch_id = std::string(129, 'b');
  CHECK_THAT(f.recorder->Record(in), HasCode(absl::StatusCode::kInvalidArgument));
  in.batch_id = std::string(128, 'b');
  CHECK_THAT(f.recorder->Record(in), IsOk());
  in.batch_id = "b2";
  in.events.clear();
  CHECK_THAT(f.recorder->Record(in), HasCode(absl::StatusCode::kInvalidArgument));
  in.events.assign(4, Event("abc"));
  CHECK_THAT(f.recorder->Record(in), HasCode(absl::StatusCode::kInvalidArgument));
  in.events.assign(3, Event("abc"));
  f.clicks.fail = absl::UnavailableError("record clicks: database unreachable");
  CHECK_THAT(f.recorder->Record(in), HasCode(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace shortener::service
