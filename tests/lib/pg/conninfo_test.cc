// Connection-string helpers, checked against libpq's own parser: every string
// they build must parse to the intended parameters. No server needed.
#include "lib/pg/conninfo.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "absl/strings/match.h"
#include "tests/support/status_matchers.h"

namespace shortener::pg {
namespace {

using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;

// What libpq reads from `conninfo`; fails the test when it is malformed.
std::map<std::string, std::string> Parsed(const std::string& conninfo) {
  absl::StatusOr<std::map<std::string, std::string>> parsed = ParseConnInfo(conninfo);
  INFO(conninfo);
  REQUIRE_THAT(parsed, IsOk());
  return *parsed;
}

TEST_CASE("ParseConnInfo returns what the string sets, in both forms", "[lib/pg]") {
  CHECK(Parsed("host=/tmp dbname=app user=u password='p w'") ==
        std::map<std::string, std::string>{
            {"host", "/tmp"}, {"dbname", "app"}, {"user", "u"}, {"password", "p w"}});
  CHECK(Parsed("postgresql://u:secret@db.example:6432/app?connect_timeout=3") ==
        std::map<std::string, std::string>{{"host", "db.example"},
                                           {"port", "6432"},
                                           {"dbname", "app"},
                                           {"user", "u"},
                                           {"password", "secret"},
                                           {"connect_timeout", "3"}});
  CHECK(Parsed("").empty());
}

TEST_CASE("ParseConnInfo rejects a malformed string without echoing it", "[lib/pg]") {
  for (const std::string bad : {"host=/tmp password=hunter2 garbage", "password='hunter2",
                                "postgresql://u:hunter2@h/db?nokey"}) {
    absl::StatusOr<std::map<std::string, std::string>> parsed = ParseConnInfo(bad);
    CHECK_THAT(parsed, HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "malformed"));
    CHECK_FALSE(absl::StrContains(parsed.status().message(), "hunter2"));
  }
}

TEST_CASE("WithConnInfoParam appends in the string's form and overrides", "[lib/pg]") {
  struct Case {
    std::string conninfo;
    std::string dbname;  // expected after the append; "" for none
  };
  for (const Case& c : {
           Case{"", ""},
           Case{"host=/tmp dbname=app connect_timeout=9", "app"},
           Case{"postgresql://h/app", "app"},
           Case{"postgres://h/app", "app"},
           Case{"postgresql://", ""},
           Case{"postgresql://h/app?connect_timeout=9", "app"},
           Case{"postgresql://h/app?", "app"},
           Case{"postgresql://h/app?sslmode=disable&", "app"},
           // A '?' in the password does not start the query (as in libpq).
           Case{"postgresql://u:pa?ss@h/app", "app"},
           Case{"postgresql://u:pa?ss@h/app?sslmode=disable", "app"},
       }) {
    const std::string out = WithConnInfoParam(c.conninfo, "connect_timeout", "4");
    INFO(c.conninfo << " -> " << out);
    std::map<std::string, std::string> parsed = Parsed(out);
    CHECK(parsed["connect_timeout"] == "4");
    CHECK(parsed["dbname"] == c.dbname);
    if (absl::StrContains(c.conninfo, "pa?ss")) CHECK(parsed["password"] == "pa?ss");
  }
}

TEST_CASE("WithConnInfoDefaults adds only what the string does not set", "[lib/pg]") {
  const std::vector<ConnInfoParam> defaults = {{"connect_timeout", "5"}, {"keepalives", "1"}};
  absl::StatusOr<std::string> kv = WithConnInfoDefaults("host=/tmp connect_timeout=2", defaults);
  REQUIRE_THAT(kv, IsOk());
  CHECK(*kv == "host=/tmp connect_timeout=2 keepalives=1");

  absl::StatusOr<std::string> uri =
      WithConnInfoDefaults("postgresql://h/app?keepalives=0", defaults);
  REQUIRE_THAT(uri, IsOk());
  CHECK(*uri == "postgresql://h/app?keepalives=0&connect_timeout=5");
  CHECK(Parsed(*uri)["keepalives"] == "0");

  CHECK_THAT(WithConnInfoDefaults("host=/tmp password=hunter2 garbage", defaults),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "malformed"));
}

TEST_CASE("TcpKeepaliveDefaults are all parameters libpq knows", "[lib/pg]") {
  const std::string out = *WithConnInfoDefaults("host=db", TcpKeepaliveDefaults());
  std::map<std::string, std::string> parsed = Parsed(out);
  CHECK(parsed["keepalives"] == "1");
  CHECK(parsed["keepalives_idle"] == "10");
  CHECK(parsed["tcp_user_timeout"] == "30000");
  CHECK(parsed.size() == 1 + TcpKeepaliveDefaults().size());
}

TEST_CASE("ConnectTimeoutSeconds rounds up to whole seconds, at least 2", "[lib/pg]") {
  CHECK(ConnectTimeoutSeconds(absl::ZeroDuration()) == 2);
  CHECK(ConnectTimeoutSeconds(-absl::Seconds(3)) == 2);
  CHECK(ConnectTimeoutSeconds(absl::Milliseconds(1)) == 2);
  CHECK(ConnectTimeoutSeconds(absl::Seconds(2)) == 2);
  CHECK(ConnectTimeoutSeconds(absl::Milliseconds(2001)) == 3);
  CHECK(ConnectTimeoutSeconds(absl::Seconds(5)) == 5);
}

}  // namespace
}  // namespace shortener::pg
