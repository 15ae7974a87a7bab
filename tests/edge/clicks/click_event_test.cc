#include "edge/clicks/click_event.h"

#include <catch2/catch.hpp>
#include <string>

namespace shortener::edge {
namespace {

TEST_CASE("HEAD requests and prefetches are not clicks", "[clicks]") {
  CHECK(CountsAsClick(false, "", ""));
  CHECK_FALSE(CountsAsClick(true, "", ""));
  CHECK_FALSE(CountsAsClick(false, "prefetch", ""));
  CHECK_FALSE(CountsAsClick(false, "", "prefetch"));
  CHECK_FALSE(CountsAsClick(false, "", "Prefetch;prerender"));
  CHECK_FALSE(CountsAsClick(false, "PREFETCH", ""));
  CHECK(CountsAsClick(false, "preview", "prerender"));
  CHECK(CountsAsClick(false, "prefetc", "refetch"));
}

TEST_CASE("events cut User-Agent and Referer to 512 bytes", "[clicks]") {
  const std::string long_value(2000, 'a');
  const ClickEvent e =
      MakeClickEvent("Ab3xYz9", absl::FromUnixSeconds(1), "10.0.0.1", long_value, long_value, 302);
  CHECK(e.user_agent.size() == kMaxClickHeaderBytes);
  CHECK(e.referer.size() == kMaxClickHeaderBytes);
  CHECK(e.code == "Ab3xYz9");
  CHECK(e.client_ip == "10.0.0.1");
}

TEST_CASE("a batch survives encoding and decoding", "[clicks]") {
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

TEST_CASE("only redirect statuses are clicks", "[clicks]") {
  for (int status : {301, 302, 307, 308}) CHECK(IsRedirectStatus(status));
  for (int status : {200, 204, 304, 404, 410, 503}) CHECK_FALSE(IsRedirectStatus(status));
}

}  // namespace
}  // namespace shortener::edge
