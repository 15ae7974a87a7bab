#include "edge/clicks/click_event.h"

#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace shortener::edge {
namespace {

using clicks::ClickTextProblem;

TEST_CASE("HEAD requests and prefetches are not clicks", "[edge/clicks]") {
  CHECK(CountsAsClick(false, "", ""));
  CHECK_FALSE(CountsAsClick(true, "", ""));
  CHECK_FALSE(CountsAsClick(false, "prefetch", ""));
  CHECK_FALSE(CountsAsClick(false, "", "prefetch"));
  CHECK_FALSE(CountsAsClick(false, "", "Prefetch;prerender"));
  CHECK_FALSE(CountsAsClick(false, "PREFETCH", ""));
  CHECK(CountsAsClick(false, "preview", "prerender"));
  CHECK(CountsAsClick(false, "prefetc", "refetch"));
}

TEST_CASE("events cut User-Agent and Referer to 512 bytes", "[edge/clicks]") {
  const std::string long_value(2000, 'a');
  const ClickEvent e =
      MakeClickEvent("Ab3xYz9", absl::FromUnixSeconds(1), "10.0.0.1", long_value, long_value, 302);
  CHECK(e.user_agent.size() == kMaxClickHeaderBytes);
  CHECK(e.referer.size() == kMaxClickHeaderBytes);
  CHECK(e.code == "Ab3xYz9");
  CHECK(e.client_ip == "10.0.0.1");
}

TEST_CASE("a batch survives encoding and decoding", "[edge/clicks]") {
  ClickBatch batch;
  batch.id = "00ff-7";
  batch.events.push_back(MakeClickEvent("abc", absl::FromUnixMillis(1700000000123), "::1",
                                        "Mozilla/5.0", "https://example.com/", 301));
  batch.events.push_back(MakeClickEvent("def", absl::FromUnixSeconds(5), "10.1.2.3", "", "", 302));
  const absl::StatusOr<ClickBatch> decoded = DecodeClickBatch(EncodeClickBatch(batch));
  REQUIRE(decoded.ok());
  CHECK(decoded->id == batch.id);
  REQUIRE(decoded->events.size() == 2);
  CHECK(decoded->events[0].time == batch.events[0].time);
  CHECK(decoded->events[0].referer == "https://example.com/");
  CHECK(decoded->events[0].http_status == 301);
  CHECK(decoded->events[1].client_ip == "10.1.2.3");
  CHECK_FALSE(DecodeClickBatch("\xff\xff\xff").ok());
}

TEST_CASE("every value copied from a request becomes clean text within the bound",
          "[edge/clicks]") {
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  ClickEvent e = MakeClickEvent("Ab3xYz9", absl::FromUnixSeconds(1), "10.0.0.1", "\xFF\xFE",
                                std::string("https://a.example/\0\r\n\x7F", 22), 302);
  CHECK(e.user_agent == r + r);
  CHECK(e.referer == "https://a.example/" + r + r + r + r);
  // The code and the address go through the same rule.
  e = MakeClickEvent(std::string("Ab\0", 3), absl::FromUnixSeconds(1), "10.0.0.1\xC0", "", "", 302);
  CHECK(e.code == "Ab" + r);
  CHECK(e.client_ip == "10.0.0.1" + r);
  // 16 KiB of control bytes: bounded at a character boundary.
  e = MakeClickEvent("Ab3xYz9", absl::FromUnixSeconds(1), "10.0.0.1", std::string(16384, '\x01'),
                     std::string(16384, '\xFF'), 302);
  CHECK(e.user_agent.size() == 510);
  CHECK(e.referer.size() == 510);
  CHECK(ClickTextProblem("user_agent", e.user_agent).empty());
  CHECK(ClickTextProblem("referer", e.referer).empty());
}

TEST_CASE("a long User-Agent is cut before a character that would not fit", "[edge/clicks]") {
  // The user's report: cut at 512 bytes, the old code left the first byte
  // of a three-byte character at the end.
  const std::string ua = std::string(510, 'a') + "\xE2\x82\xAC" + "more";
  const ClickEvent e = MakeClickEvent("Ab3xYz9", absl::FromUnixSeconds(1), "10.0.0.1", ua, "", 302);
  CHECK(e.user_agent == std::string(510, 'a'));
  // Valid text within the bound is kept byte for byte.
  const std::string fits = std::string(509, 'a') + "\xE2\x82\xAC";
  CHECK(MakeClickEvent("c", absl::FromUnixSeconds(1), "", fits, "", 302).user_agent == fits);
}

TEST_CASE("a batch an older edge encoded with any bytes decodes into clean events",
          "[edge/clicks]") {
  v1::RecordClicksRequest old;
  old.set_batch_id("0011-9");
  v1::ClickEvent* e = old.add_events();
  e->set_code("abc");
  e->set_user_agent("Mozilla/5.0 \xFF\xFE");
  e->set_referer(std::string(600, 'r') + "\xC3");
  e->set_http_status(302);
  const absl::StatusOr<ClickBatch> batch = DecodeClickBatch(old.SerializeAsString());
  REQUIRE(batch.ok());
  REQUIRE(batch->events.size() == 1);
  CHECK(batch->events[0].user_agent == "Mozilla/5.0 \xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(batch->events[0].referer == std::string(512, 'r'));
  // No id or no events: damage, not a batch.
  old.clear_batch_id();
  CHECK_FALSE(DecodeClickBatch(old.SerializeAsString()).ok());
  old.set_batch_id("0011-9");
  old.clear_events();
  CHECK_FALSE(DecodeClickBatch(old.SerializeAsString()).ok());
  CHECK_FALSE(DecodeClickBatch("").ok());
}

TEST_CASE("EncodedSizeBound is never below what an event adds to a batch", "[edge/clicks]") {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) {
    ClickBatch batch;
    batch.id = "0123456789abcdef-123456";
    size_t bound = 1 + 1 + batch.id.size();
    const int n = 1 + static_cast<int>(rng() % 20);
    for (int k = 0; k < n; ++k) {
      const auto text = [&rng](size_t max) {
        std::string s(rng() % (max + 1), '\0');
        for (char& c : s) c = static_cast<char>(rng());
        return s;
      };
      const int64_t seconds = static_cast<int64_t>(rng() % 2 ? rng() : rng() % 4000000000);
      batch.events.push_back(MakeClickEvent(text(20), absl::FromUnixSeconds(seconds % 253402300799),
                                            text(50), text(700), text(700),
                                            static_cast<int>(rng() % 2 ? -1 : 308)));
      bound += EncodedSizeBound(batch.events.back());
    }
    REQUIRE(EncodeClickBatch(batch).size() <= bound);
  }
}

TEST_CASE("half batch ids are distinct, stable and within the service's limit", "[edge/clicks]") {
  CHECK(HalfBatchId("0011-9", 0) == "0011-9.0");
  CHECK(HalfBatchId("0011-9", 1) == "0011-9.1");
  CHECK(HalfBatchId(HalfBatchId("0011-9", 1), 0) == "0011-9.1.0");
  std::set<std::string> ids;
  std::vector<std::string> level = {std::string(100, 'e')};
  for (int depth = 0; depth < 16; ++depth) {
    std::vector<std::string> next;
    for (const std::string& id : level) {
      for (int half = 0; half < 2 && next.size() < 4096; ++half) {
        std::string child = HalfBatchId(id, half);
        CHECK(child.size() <= kMaxBatchIdBytes);
        CHECK(child == HalfBatchId(id, half));
        CHECK(ids.insert(child).second);
        next.push_back(std::move(child));
      }
    }
    level = std::move(next);
  }
}

TEST_CASE("SplitBatch keeps every event in order", "[edge/clicks]") {
  ClickBatch batch;
  batch.id = "b";
  for (int i = 0; i < 5; ++i) {
    batch.events.push_back(
        MakeClickEvent(std::to_string(i), absl::FromUnixSeconds(i), "", "", "", 302));
  }
  const auto [first, second] = SplitBatch(batch);
  CHECK(first.id == "b.0");
  CHECK(second.id == "b.1");
  REQUIRE(first.events.size() == 2);
  REQUIRE(second.events.size() == 3);
  CHECK(first.events[0].code == "0");
  CHECK(second.events[0].code == "2");
  CHECK(second.events[2].code == "4");
}

TEST_CASE("only redirect statuses are clicks", "[edge/clicks]") {
  for (int status : {301, 302, 307, 308}) CHECK(IsRedirectStatus(status));
  for (int status : {200, 204, 304, 404, 410, 503}) CHECK_FALSE(IsRedirectStatus(status));
}

}  // namespace
}  // namespace shortener::edge
