// lib/url/host_name.h: the host of an absolute URL, checked against a table
// and against libcurl's reading of every URL the policy normalises; the host
// name character rule over every byte.
#include "lib/url/host_name.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/url/curl_url.h"
#include "lib/url/url_policy.h"

namespace shortener::url {
namespace {

TEST_CASE("IsHostNameChar holds for exactly letters, digits and hyphen", "[lib/url]") {
  const std::string allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-";
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    INFO(b);
    CHECK(IsHostNameChar(c) == (allowed.find(c) != std::string::npos));
  }
  CHECK(kMaxHostLabelLength == 63);
  CHECK(kMaxHostNameLength == 253);
}

TEST_CASE("HostOfUrl gives the host as written, without userinfo and port", "[lib/url]") {
  struct Case {
    std::string url;
    std::string host;
  };
  const std::vector<Case> cases = {
      {"http://sho.rt/", "sho.rt"},
      {"https://Example.COM/path?q=1#f", "Example.COM"},
      {"https://example.com", "example.com"},
      {"https://example.com?x", "example.com"},
      {"https://example.com#x", "example.com"},
      {"http://sho.rt:8080/", "sho.rt"},
      {"http://user:pw@news.example.org:8080/", "news.example.org"},
      {"https://a@b@c.example", "c.example"},
      {"https://a@b/c@d", "b"},  // an "@" in the path is not userinfo
      {"android-app://com.google.android.gm/", "com.google.android.gm"},
      {"http://[2001:DB8::1]:443/x", "[2001:DB8::1]"},
      {"http://u@[::1]/", "[::1]"},
      {"http://[::1]", "[::1]"},
      {"http://192.0.2.7/", "192.0.2.7"},
      {"http://xn--bcher-kva.example/", "xn--bcher-kva.example"},
      {"http://ex%41mple.com/", "ex%41mple.com"},  // percent-encoding untouched
      {"http://:80/", ""},
  };
  for (const Case& c : cases) {
    INFO(c.url);
    CHECK(std::string(HostOfUrl(c.url)) == c.host);
  }
}

TEST_CASE("HostOfUrl gives nothing without a scheme, an authority or a closed literal",
          "[lib/url]") {
  for (const char* bad :
       {"", "example.com", "/local/path", "//example.com/", "://example.com", "1http://example.com",
        "ht tp://example.com", "mailto:a@example.com", "https://", "https:///path", "https://?q",
        "https://#f", "https://user@/", "https://[::1", "https://[::1]x/", "https://[::1]]/"}) {
    INFO(bad);
    CHECK(HostOfUrl(bad).empty());
  }
}

// On raw URLs libcurl rewrites hosts (numeric IPv4 spellings, IPv6 case,
// percent-decoding), so agreement is checked on what the policy returns.
TEST_CASE("HostOfUrl reads every normalised URL's host as libcurl does", "[lib/url]") {
  const UrlPolicy policy(UrlPolicyOptions{});
  const std::vector<std::string> hosts = {"example.com",
                                          "Example.COM.",
                                          "b\xc3\xbc"
                                          "cher.example",
                                          "a-b.c-d.example",
                                          "93.184.216.34",
                                          "0x5d.184.216.34",
                                          "[2001:DB8::1]",
                                          "[::ffff:93.184.216.34]",
                                          "1.example"};
  const std::vector<std::string> tails = {"",          "/",        ":8080",     ":443/x",
                                          "/a@b",      "?q=a@b:c", "#f:1",      "/p?q#f",
                                          ":80/x?y#z", "/%41@",    "/a/../b/:c"};
  for (const char* scheme : {"http", "HTTPS"}) {
    for (const std::string& host : hosts) {
      for (const char* userinfo : {"", "user@", "u:p@"}) {
        for (const std::string& tail : tails) {
          const std::string raw = absl::StrCat(scheme, "://", userinfo, host, tail);
          INFO(raw);
          // The policy refuses userinfo; without it the URL is normalised.
          absl::StatusOr<std::string> normalised = policy.Normalize(raw);
          if (*userinfo != '\0') {
            CHECK_FALSE(normalised.ok());
            continue;
          }
          REQUIRE(normalised.ok());
          absl::StatusOr<internal::UrlParts> parts = internal::ParseWithCurl(*normalised);
          REQUIRE(parts.ok());
          CHECK(std::string(HostOfUrl(*normalised)) == parts->host);
        }
      }
    }
  }
}

}  // namespace
}  // namespace shortener::url
