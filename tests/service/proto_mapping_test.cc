// services/shorten/proto_mapping: the copying and the moving ToProto of a
// ShortenOutput answer the same message.
#include "services/shorten/proto_mapping.h"

#include <catch2/catch.hpp>
#include <string>

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

TEST_CASE("ToProto of a ShortenOutput moved gives the message of one copied", "[service]") {
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

}  // namespace
}  // namespace shortener::service
