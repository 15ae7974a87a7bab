// services/shorten/proto_mapping: the copying and the moving ToProto of a
// ShortenOutput answer the same message.
#include "services/shorten/proto_mapping.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"

namespace shortener::service {
namespace {

ShortenOutput MakeOutput() {
  ShortenOutput out;
  out.created = true;
  out.link.code = "pYY45xs";
  out.link.short_url = "https://s.example/pYY45xs";
  out.link.state = LinkState::kExpired;
  out.link.link.id = 42;
  out.link.link.long_url = "https://example.com/a/rather/long/path?q=1#frag";
  out.link.link.owner = "tenant-a";
  out.link.link.redirect_status = 308;
  out.link.link.create_time = absl::FromUnixMicros(1732500000123456);
  out.link.link.expire_time = absl::FromUnixSeconds(1732600000);
  out.link.link.revoke_time = absl::FromUnixSeconds(1732550000);
  out.link.link.max_clicks = 7;
  return out;
}

TEST_CASE("ToProto of a ShortenOutput moved gives the message of one copied",
          "[services/shorten]") {
  const ShortenOutput original = MakeOutput();
  v1::ShortenResponse copied;
  ToProto(original, &copied);
  ShortenOutput movable = MakeOutput();
  v1::ShortenResponse moved;
  ToProto(std::move(movable), &moved);
  CHECK(moved.SerializeAsString() == copied.SerializeAsString());
  // And the message holds what was in the output.
  CHECK(copied.code() == "pYY45xs");
  CHECK(copied.short_url() == "https://s.example/pYY45xs");
  CHECK(copied.created());
  CHECK(copied.link().code() == "pYY45xs");
  CHECK(copied.link().short_url() == "https://s.example/pYY45xs");
  CHECK(copied.link().long_url() == "https://example.com/a/rather/long/path?q=1#frag");
  CHECK(copied.link().owner() == "tenant-a");
  CHECK(copied.link().state() == v1::LINK_STATE_EXPIRED);
  CHECK(copied.link().redirect_type() == v1::REDIRECT_TYPE_PERMANENT);
  CHECK(copied.link().create_time().seconds() == 1732500000);
  CHECK(copied.link().create_time().nanos() == 123456000);
  CHECK(copied.link().expire_time().seconds() == 1732600000);
  CHECK(copied.link().revoke_time().seconds() == 1732550000);
  CHECK(copied.link().max_clicks() == 7);
}

TEST_CASE("a BatchShorten item that cannot be decoded keeps its slot and its own error",
          "[services/shorten]") {
  v1::BatchShortenRequest request;
  request.add_requests()->set_long_url("https://example.com/a");
  v1::ShortenRequest* bad = request.add_requests();
  bad->set_long_url("https://example.com/b");
  bad->set_redirect_type(static_cast<v1::RedirectType>(99));
  v1::ShortenRequest* third = request.add_requests();
  third->set_long_url("https://example.com/c");
  third->set_custom_alias("spring-sale");
  third->set_redirect_type(v1::REDIRECT_TYPE_PERMANENT);
  const auto caller = std::make_shared<const auth::Principal>();

  const std::vector<absl::StatusOr<ShortenInput>> items = FromProto(request, caller);
  REQUIRE(items.size() == 3);
  REQUIRE(items[0].ok());
  CHECK(items[1].status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(items[1].status().message(), "redirect_type: unknown value 99"));
  REQUIRE(items[2].ok());
  CHECK(items[0]->long_url == "https://example.com/a");
  CHECK(items[2]->custom_alias == "spring-sale");
  CHECK(items[2]->redirect_status == 308);
  CHECK(items[0]->caller == caller);
  CHECK(items[2]->caller == caller);
}

}  // namespace
}  // namespace shortener::service

namespace shortener::service {
namespace {

TEST_CASE("click events with bytes that are not UTF-8 parse and map as they were sent",
          "[services/shorten][clicks]") {
  v1::RecordClicksRequest request;
  request.set_batch_id("edge-1");
  v1::ClickEvent* event = request.add_events();
  event->set_code("abc");
  event->set_user_agent(std::string("\xFF\xFE\0", 3));
  event->set_referer("\xED\xA0\x80");
  event->set_client_ip("\xC0\x80");
  event->set_http_status(302);
  event->mutable_time()->set_seconds(1893456000);
  request.add_events()->set_code("no-time");
  v1::ClickEvent* bad_time = request.add_events();
  bad_time->mutable_time()->set_seconds(1893456000);
  bad_time->mutable_time()->set_nanos(-1);
  // Over the wire and back: a proto3 string field would refuse to parse this.
  v1::RecordClicksRequest parsed;
  REQUIRE(parsed.ParseFromString(request.SerializeAsString()));
  const RecordClicksInput input = FromProto(parsed);
  CHECK(input.batch_id == "edge-1");
  REQUIRE(input.events.size() == 3);
  CHECK(input.events[0].user_agent == std::string("\xFF\xFE\0", 3));
  CHECK(input.events[0].referer == "\xED\xA0\x80");
  CHECK(input.events[0].client_ip == "\xC0\x80");
  CHECK(input.events[0].http_status == 302);
  REQUIRE(input.events[0].time.ok());
  CHECK(*input.events[0].time == absl::FromUnixSeconds(1893456000));
  CHECK(input.events[1].time.status().message() == "time: missing");
  CHECK(absl::IsInvalidArgument(input.events[2].time.status()));
  CHECK(absl::StartsWith(input.events[2].time.status().message(), "time: out of range"));
}

TEST_CASE("the RecordClicks answer lists the refused events with clean reasons",
          "[services/shorten][clicks]") {
  RecordClicksOutput output;
  output.accepted = 7;
  output.refused = {{1, "user_agent: invalid UTF-8 at byte 0 (0xFF)"},
                    {4, "odd \xFF reason " + std::string(300, 'x')}};
  v1::RecordClicksResponse response;
  ToProto(output, &response);
  CHECK(response.accepted() == 7);
  REQUIRE(response.refused_size() == 2);
  CHECK(response.refused(0).index() == 1);
  CHECK(response.refused(0).reason() == "user_agent: invalid UTF-8 at byte 0 (0xFF)");
  CHECK(response.refused(1).index() == 4);
  CHECK(response.refused(1).reason().size() <= 200);
  CHECK(absl::StartsWith(response.refused(1).reason(), "odd \xEF\xBF\xBD reason xxx"));
  // The edge must be able to parse it.
  v1::RecordClicksResponse parsed;
  CHECK(parsed.ParseFromString(response.SerializeAsString()));
}

TEST_CASE("a GetQrCode request gets its defaults, and out-of-range fields are refused by name",
          "[services/shorten]") {
  v1::GetQrCodeRequest request;
  request.set_code("spring-sale");
  absl::StatusOr<QrQuery> plain = FromProto(request);
  REQUIRE(plain.ok());
  CHECK(plain->code == "spring-sale");
  CHECK(plain->options.format == qr::ImageFormat::kPng);
  CHECK(plain->options.size_px == 256);
  CHECK(plain->options.margin_modules == 4);
  CHECK(plain->options.level == qr::ErrorCorrection::kMedium);

  request.set_format(v1::GetQrCodeRequest::FORMAT_SVG);
  request.set_size_px(4096);
  request.set_margin_modules(0);  // set, so not the default
  request.set_error_correction(v1::GetQrCodeRequest::ERROR_CORRECTION_HIGH);
  absl::StatusOr<QrQuery> full = FromProto(request);
  REQUIRE(full.ok());
  CHECK(full->options.format == qr::ImageFormat::kSvg);
  CHECK(full->options.size_px == 4096);
  CHECK(full->options.margin_modules == 0);
  CHECK(full->options.level == qr::ErrorCorrection::kHigh);

  auto refused = [](v1::GetQrCodeRequest r) {
    absl::StatusOr<QrQuery> q = FromProto(r);
    REQUIRE_FALSE(q.ok());
    CHECK(q.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(q.status().message());
  };
  v1::GetQrCodeRequest bad;
  bad.set_format(static_cast<v1::GetQrCodeRequest::Format>(7));
  CHECK(refused(bad) == "format: unknown value 7 (FORMAT_PNG or FORMAT_SVG)");
  bad = v1::GetQrCodeRequest();
  bad.set_error_correction(static_cast<v1::GetQrCodeRequest::ErrorCorrection>(9));
  CHECK(refused(bad) ==
        "error_correction: unknown value 9 (ERROR_CORRECTION_LOW, _MEDIUM, _QUARTILE or _HIGH)");
  bad = v1::GetQrCodeRequest();
  bad.set_size_px(-5);
  CHECK(refused(bad) == "size_px: must be 64 to 4096, got -5");
  bad = v1::GetQrCodeRequest();
  bad.set_margin_modules(17);
  CHECK(refused(bad) == "margin_modules: must be 0 to 16, got 17");
}

}  // namespace
}  // namespace shortener::service
