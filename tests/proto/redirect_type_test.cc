// The redirect-status rule and its one mapping onto the contract's
// RedirectType: every status 0..999 and every enum value.
#include "proto/redirect_type.h"

#include <catch2/catch.hpp>

#include "lib/common/redirect_status.h"

namespace shortener {
namespace {

TEST_CASE("redirect status: exactly 301, 302, 307 and 308 are redirects", "[proto][redirect]") {
  int redirects = 0;
  for (int status = 0; status < 1000; ++status) {
    if (IsRedirectStatus(status)) ++redirects;
  }
  CHECK(redirects == 4);
  for (int status : {301, 302, 307, 308}) CHECK(IsRedirectStatus(status));
  for (int status : {-302, 0, 200, 300, 303, 304, 305, 306, 309, 404}) {
    CHECK_FALSE(IsRedirectStatus(status));
  }
}

TEST_CASE("redirect type: every redirect status round-trips through its type",
          "[proto][redirect]") {
  for (int status : kRedirectStatuses) {
    const v1::RedirectType type = RedirectTypeOf(status);
    REQUIRE(RedirectStatusOf(type).has_value());
    CHECK(*RedirectStatusOf(type) == status);
  }
  CHECK(RedirectTypeOf(301) == v1::REDIRECT_TYPE_MOVED_PERMANENTLY);
  CHECK(RedirectTypeOf(302) == v1::REDIRECT_TYPE_FOUND);
  CHECK(RedirectTypeOf(307) == v1::REDIRECT_TYPE_TEMPORARY);
  CHECK(RedirectTypeOf(308) == v1::REDIRECT_TYPE_PERMANENT);
}

TEST_CASE(
    "redirect type: unset means FOUND, an unknown value has no status, a non-redirect "
    "status is FOUND",
    "[proto][redirect]") {
  CHECK(RedirectStatusOf(v1::REDIRECT_TYPE_UNSPECIFIED) == 302);
  CHECK_FALSE(RedirectStatusOf(static_cast<v1::RedirectType>(99)).has_value());
  CHECK(RedirectTypeOf(200) == v1::REDIRECT_TYPE_FOUND);
  // Every value the contract defines has a status.
  const google::protobuf::EnumDescriptor* values = v1::RedirectType_descriptor();
  for (int i = 0; i < values->value_count(); ++i) {
    CHECK(RedirectStatusOf(static_cast<v1::RedirectType>(values->value(i)->number())).has_value());
  }
}

}  // namespace
}  // namespace shortener
