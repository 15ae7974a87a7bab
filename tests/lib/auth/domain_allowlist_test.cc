// Per-key target-domain allowlists: parsing and the match table.
#include "lib/auth/domain_allowlist.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/status_matchers.h"

namespace shortener::auth {
namespace {

using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;

DomainAllowlist MustParse(absl::string_view entries) {
  auto list = DomainAllowlist::Parse(entries);
  REQUIRE_THAT(list, IsOk());
  return *std::move(list);
}

TEST_CASE("an empty allowlist allows every domain", "[lib/auth]") {
  const DomainAllowlist none;
  CHECK(none.empty());
  CHECK(none.Allows("example.com"));
  CHECK(none.Allows("anything.at.all"));
  const DomainAllowlist parsed = MustParse("  ");
  CHECK(parsed.empty());
  CHECK(parsed.Allows("example.com"));
  CHECK(parsed.ToString().empty());
}

TEST_CASE("allowlist match table", "[lib/auth]") {
  const DomainAllowlist list =
      MustParse("example.com, *.example.org,Shop.Example.NET.,*.xn--bcher-kva.de");
  struct Case {
    const char* host;
    bool allowed;
  };
  const std::vector<Case> cases = {
      // Exact entries: that host only.
      {"example.com", true},
      {"EXAMPLE.COM", true},
      {"example.com.", true},
      {"www.example.com", false},
      {"shop.example.net", true},
      {"SHOP.example.net.", true},
      {"example.net", false},
      {"a.shop.example.net", false},
      // Wildcards: any subdomain, at any depth, but not the apex.
      {"a.example.org", true},
      {"a.b.c.example.org", true},
      {"WWW.Example.Org.", true},
      {"example.org", false},
      {"xn--80ak6aa92e.example.org", true},
      {"www.xn--bcher-kva.de", true},
      {"xn--bcher-kva.de", false},
      // Look-alikes are refused.
      {"evil-example.com", false},
      {"evilexample.com", false},
      {"example.com.evil.net", false},
      {"example.org.evil.net", false},
      {"a.example.org.evil.net", false},
      {"evil-example.org", false},
      {"aexample.org", false},
      {"example.co", false},
      {"xample.com", false},
      {"com", false},
      {"org", false},
      // Malformed hosts never match.
      {"", false},
      {".", false},
      {".example.org", false},
      {"a..example.org", false},
      {"..example.org", false},
      {"example.com..", false},
      {"*.example.org", false},
      {"a_b.example.org", false},
      {"a%2e.example.org", false},
      {"b\xc3\xbc"
       "cher.example.org",
       false},
      {"a b.example.org", false},
  };
  for (const Case& c : cases) {
    INFO(c.host);
    CHECK(list.Allows(c.host) == c.allowed);
  }
}

TEST_CASE("allowlists print normalised, sorted and deduplicated", "[lib/auth]") {
  CHECK(MustParse("b.com,*.A.com,a.com.,B.COM").ToString() == "*.a.com,a.com,b.com");
  auto from = DomainAllowlist::FromEntries({"Example.com", "*.example.com"});
  REQUIRE_THAT(from, IsOk());
  CHECK(from->ToString() == "*.example.com,example.com");
  CHECK(MustParse(from->ToString()).ToString() == from->ToString());
}

TEST_CASE("bad allowlist entries are INVALID_ARGUMENT naming the entry", "[lib/auth]") {
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  struct Case {
    std::string entries;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"example.com,,b.com", "entry \"\": empty entry"},
      {"example.com, ", "entry \" \": empty entry"},
      {"a..com", "entry \"a..com\": empty label"},
      {".example.com", "entry \".example.com\": empty label"},
      {"example.com..", "entry \"example.com..\": empty label"},
      {".", "entry \".\": empty label"},
      {"*", "entry \"*\": '*' alone"},
      {"*.", "entry \"*.\": '*' alone"},
      {"*.com", "entry \"*.com\": a wildcard must cover at least two labels"},
      {"*..com", "entry \"*..com\": empty label"},
      {"www.*.example.com",
       "entry \"www.*.example.com\": '*' is allowed only as the whole leftmost"},
      {"*example.com", "entry \"*example.com\": '*' is allowed only"},
      {"a*.example.com", "'*' is allowed only"},
      {"*.*.example.com", "'*' is allowed only"},
      {"b\xc3\xbc"
       "cher.de",
       "write IDNs as punycode"},
      {"exa_mple.com", "only letters, digits, '-' and '.'"},
      {"example.com:8080", "entry \"example.com:8080\": only letters"},
      {"https://example.com", "only letters"},
      {"ex ample.com", "only letters"},
      {std::string(64, 'a') + ".com", "label longer than 63"},
      {std::string(63, 'a') + "." + std::string(63, 'b') + "." + std::string(63, 'c') + "." +
           std::string(63, 'd') + ".com",
       "longer than 253"},
  };
  for (const Case& c : cases) {
    INFO(c.entries);
    const absl::StatusOr<DomainAllowlist> list = DomainAllowlist::Parse(c.entries);
    CHECK_THAT(list, HasCodeAndMessage(kInvalid, c.message));
    CHECK_THAT(list, HasCodeAndMessage(kInvalid, "allowed domains: entry \""));
  }
  CHECK_THAT(DomainAllowlist::FromEntries({"ok.com", ""}),
             HasCodeAndMessage(kInvalid, "empty entry"));
  CHECK_THAT(DomainAllowlist::Parse(std::string(63, 'a') + ".com"), IsOk());
}

}  // namespace
}  // namespace shortener::auth
