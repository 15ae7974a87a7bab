// Table-driven tests of UrlPolicy: every bad input is refused with
// INVALID_ARGUMENT and a message naming its problem; every good input has
// one expected normalised form, and normalising is idempotent.
#include "lib/url/url_policy.h"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/support/status_matchers.h"

namespace shortener::url {
namespace {

using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;
using namespace std::string_literals;  // "...\0..."s keeps the NUL

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

UrlPolicyOptions TestOptions() {
  UrlPolicyOptions options;
  options.short_domains = {"sho.rt", "Go.Example."};
  options.denied_domains = {"evil.example", ".tracker.example", "bücher-böse.de", "::2"};
  return options;
}

std::string Repeat(absl::string_view s, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) absl::StrAppend(&out, s);
  return out;
}

struct BadCase {
  std::string input;
  std::string problem;  // a substring the message must contain
};

const std::vector<BadCase>& BadCases() {
  static const auto* const kCases = new std::vector<BadCase>{
      // Schemes.
      {"javascript:alert(1)", R"(scheme "javascript" is not allowed (allowed: http, https))"},
      {"JavaScript:alert(document.cookie)", R"(scheme "javascript" is not allowed)"},
      {"data:text/html,<script>alert(1)</script>", R"(scheme "data" is not allowed)"},
      {"vbscript:msgbox(1)", R"(scheme "vbscript" is not allowed)"},
      {"file:///etc/passwd", R"(scheme "file" is not allowed)"},
      {"ftp://example.com/file", R"(scheme "ftp" is not allowed)"},
      {"mailto:someone@example.com", R"(scheme "mailto" is not allowed)"},
      {"ws://example.com/socket", R"(scheme "ws" is not allowed)"},
      {"example.com:8080/x", R"(scheme "example.com" is not allowed)"},
      // Not absolute.
      {"example.com/path", "has no scheme"},
      {"www.example.com", "has no scheme"},
      {"/relative/path", "has no scheme"},
      {"?q=1", "has no scheme"},
      {"//example.com/x", "is scheme-relative"},
      {"http:example.com", R"(must have "//" after "http:")"},
      {"HTTP:/example.com", R"(must have "//" after "http:")"},
      {"http:", R"(must have "//" after "http:")"},
      // No host.
      {"http://", "has no host"},
      {"http:///path", "has no host"},
      {"http:////example.com/", "has no host"},
      {"http://?q=1", "has no host"},
      {"http://#f", "has no host"},
      {"http://:8080/", "has no host"},
      {"http://./", "has no host"},
      // Whitespace and control characters, each named with its position.
      {"", "is empty"},
      {"   ", "contains a space at position 0"},
      {" \t\r\n", "contains a space at position 0"},
      {" http://example.com/", "contains a space at position 0"},
      {"http://example.com/ ", "contains a space at position 19"},
      {"http://exa mple.com", "contains a space at position 10"},
      {"http://example.com/a b", "contains a space at position 20"},
      {"http://example.com/\r\nSet-Cookie:x", "control character at position 19 (0x0D, CR)"},
      {"http://example.com/a\nb", "control character at position 20 (0x0A, LF)"},
      {"http://example.com/\tx", "control character at position 19 (0x09, TAB)"},
      {"\thttp://example.com/", "control character at position 0 (0x09, TAB)"},
      {"http://example.com/\0x"s, "control character at position 19 (0x00, NUL)"},
      {"http://example.com/\x7F", "control character at position 19 (0x7F, DEL)"},
      {"http://example.com/\x1B[31m", "control character at position 19 (0x1B)"},
      {"http://example.com/\xC2\x85", "control character at position 19 (U+0085)"},
      {"http://example.com/\xC2\xA0", "Unicode space at position 19 (U+00A0)"},
      {"http://example.com/\xE3\x80\x80", "Unicode space at position 19 (U+3000)"},
      {"http://example.com/\xE2\x80\xAEgpj.exe",
       "invisible formatting character at position 19 (U+202E)"},
      {"http://exa\xE2\x80\x8Bmple.com/", "invisible formatting character at position 10 (U+200B)"},
      // Backslashes: browsers read them as "/", libcurl as data.
      {"http://example.com\\@evil.example/", "contains a backslash at position 18"},
      {"http://example.com/a\\b", "contains a backslash at position 20"},
      // Credentials.
      {"http://user:pw@example.com/", "must not contain credentials"},
      {"http://user@example.com/", "must not contain credentials"},
      {"http://@example.com/", "must not contain credentials"},
      {"http://:pw@example.com/", "must not contain credentials"},
      {"http://example.com:80@evil.example/", "must not contain credentials"},
      // Length, before parsing.
      {"http://example.com/" + std::string(2030, 'a'),
       "is 2049 bytes, longer than the limit of 2048"},
      {"http://example.com/" + std::string(100000, 'a'),
       "is 100019 bytes, longer than the limit of 2048"},
      // Length, after percent-encoding: 1001 "ü" are 2002 bytes raw, 6006 encoded.
      {"http://example.com/" + Repeat("ü", 1001),
       "is 6025 bytes once normalised, longer than the limit of 2048"},
      // Percent-encoding.
      {"http://example.com/%zz", "broken percent-encoding at position 19"},
      {"http://example.com/%4", "broken percent-encoding at position 19"},
      {"http://example.com/?q=%", "broken percent-encoding at position 22"},
      {"http://example.com/#%G1", "broken percent-encoding at position 20"},
      {"http://exa%mple.com/", "broken percent-encoding at position 10"},
      // Our own short domains (redirect loops).
      {"http://sho.rt/abc", R"(host "sho.rt" is one of our own short domains)"},
      {"https://SHO.RT./abc", R"(host "sho.rt" is one of our own short domains)"},
      {"http://a.b.sho.rt/",
       R"(host "a.b.sho.rt" is one of our own short domains (a subdomain of "sho.rt"))"},
      {"http://sho%2Ert/abc", R"(host "sho.rt" is one of our own short domains)"},
      // Full-width letters and the ideographic full stop map to ASCII (UTS #46).
      {"http://ｓｈｏ.rt/", R"(host "sho.rt" is one of our own short domains)"},
      {"http://sho。rt/", R"(host "sho.rt" is one of our own short domains)"},
      {"https://go.example:8443/x", R"(host "go.example" is one of our own short domains)"},
      // Deny list.
      {"http://evil.example/", R"(host "evil.example" is on the deny list)"},
      {"http://cdn.Evil.Example/x",
       R"(host "cdn.evil.example" is on the deny list (a subdomain of "evil.example"))"},
      {"http://tracker.example/", R"(host "tracker.example" is on the deny list)"},
      {"http://bücher-böse.de/", R"(host "xn--bcher-bse-67a3d.de" is on the deny list)"},
      {"http://[::2]/", R"(host "[::2]" is on the deny list)"},
      // Ports.
      {"http://example.com:99999/", "bad port number"},
      {"http://example.com:65536/", "bad port number"},
      {"http://example.com:abc/", "bad port number"},
      {"http://example.com:-1/", "bad port number"},
      {"http://example.com:0/", "bad port number 0"},
      // Invalid UTF-8.
      {"http://example.com/\xFF", "invalid UTF-8 at position 19"},
      {"http://example.com/\xC0\xAF", "invalid UTF-8 at position 19"},
      {"http://example.com/\xED\xA0\x80", "invalid UTF-8 at position 19"},
      {"http://b\xFC"
       "cher.de/",
       "invalid UTF-8 at position 8"},
      // Hosts.
      {"http://[::1/", "malformed IPv6 address"},
      {"http://[]/", "malformed IPv6 address"},
      {"http://[1.2.3.4]/", "malformed IPv6 address"},
      {"http://[fe80::1%25eth0]/", "must not have an IPv6 zone id"},
      {"http://exa%00mple.com/", "has a malformed host"},
      {"http://exa<mple.com/", "has a malformed host"},
      {"http://\u0301a.example/", "is not a valid internationalised domain name"},
      {"http://exa%25mple.com/", "has a malformed host (forbidden bytes once percent-decoded)"},
      {"http://%80.example/", "has a malformed host (forbidden bytes once percent-decoded)"},
      {"http://example..com/", "has a malformed host (empty label)"},
      {"http://" + std::string(64, 'a') + ".com/",
       "has a malformed host (label longer than 63 bytes)"},
      {"http://1.2.3.256/", "has a malformed host (not a valid IPv4 address)"},
      {"http://example.123/", "has a malformed host (not a valid IPv4 address)"},
  };
  return *kCases;
}

struct GoodCase {
  std::string input;
  std::string expected;
};

const std::vector<GoodCase>& GoodCases() {
  static const auto* const kCases = new std::vector<GoodCase>{
      {"http://example.com", "http://example.com/"},
      {"HTTP://EXAMPLE.COM/Path/To?Q=Up#Frag", "http://example.com/Path/To?Q=Up#Frag"},
      {"HtTpS://Example.Com", "https://example.com/"},
      {"https://bücher.de/", "https://xn--bcher-kva.de/"},
      {"https://BÜCHER.de/", "https://xn--bcher-kva.de/"},
      {"https://faß.de/", "https://xn--fa-hia.de/"},
      {"http://xn--bcher-kva.de/", "http://xn--bcher-kva.de/"},
      {"http://example.com:80/x", "http://example.com/x"},
      {"http://example.com:0080/x", "http://example.com/x"},
      {"https://example.com:443/", "https://example.com/"},
      {"https://example.com:80/", "https://example.com:80/"},
      {"http://example.com:8080/x", "http://example.com:8080/x"},
      {"http://example.com:/x", "http://example.com/x"},
      {"http://example.com/search?q=a&b=c=d&q=z&a=", "http://example.com/search?q=a&b=c=d&q=z&a="},
      {"http://example.com/p?b=2&a=1#section-2", "http://example.com/p?b=2&a=1#section-2"},
      {"http://example.com/p#frag?with#hash", "http://example.com/p#frag?with#hash"},
      {"http://example.com?q", "http://example.com/?q"},
      {"http://example.com/?", "http://example.com/?"},
      {"http://example.com/#", "http://example.com/"},
      {"http://[2001:db8::5]:8080/", "http://[2001:db8::5]:8080/"},
      {"http://[2001:DB8::1]/", "http://[2001:db8::1]/"},
      {"https://[::ffff:192.0.2.1]:443/x", "https://[::ffff:192.0.2.1]/x"},
      {"http://192.0.2.1/", "http://192.0.2.1/"},
      {"http://192.0.2.1:8080", "http://192.0.2.1:8080/"},
      {"http://example.com./x", "http://example.com/x"},
      {"http://example.com/a%2Fb%20c?x=%26&y=%3d#%2f",
       "http://example.com/a%2Fb%20c?x=%26&y=%3d#%2f"},
      {"http://example.com/a/./b/../c", "http://example.com/a/c"},
      {"http://example.com/%2e%2e/x", "http://example.com/%2e%2e/x"},
      {"http://example.com/päth?q=ü#frä", "http://example.com/p%C3%A4th?q=%C3%BC#fr%C3%A4"},
      {"http://example.com/a\"<>`{}|^?b=\"<>#`{}",
       "http://example.com/a%22%3C%3E%60%7B%7D%7C%5E?b=%22%3C%3E#%60%7B%7D"},
      {"http://example.com/~u/!$&'()*+,;=:@?a[]=1&b=[2]",
       "http://example.com/~u/!$&'()*+,;=:@?a[]=1&b=[2]"},
      {"http://ex%61mple.com/", "http://example.com/"},
      {"http://%C3%BC.de/", "http://xn--tda.de/"},
      {"http://0x5d.0xb8.0xd8.0x22/", "http://93.184.216.34/"},
      {"http://1example.com/", "http://1example.com/"},
      {"http://a-b--c.example.com/", "http://a-b--c.example.com/"},
      {"http://example.com/" + std::string(2029, 'a'),
       "http://example.com/" + std::string(2029, 'a')},
      {"http://notsho.rt/", "http://notsho.rt/"},
      {"http://sho.rt.example.com/", "http://sho.rt.example.com/"},
      {"http://notevil.example/", "http://notevil.example/"},
      {"http://localhost.example.com:3000/", "http://localhost.example.com:3000/"},
  };
  return *kCases;
}

TEST_CASE("bad long URLs are refused with a message naming the problem", "[lib/url]") {
  const UrlPolicy policy(TestOptions());
  for (const BadCase& c : BadCases()) {
    INFO("input: " << c.input.substr(0, 80));
    const absl::StatusOr<std::string> result = policy.Normalize(c.input);
    CHECK_THAT(result, HasCodeAndMessage(kInvalid, "long_url: "));
    CHECK_THAT(result, HasCodeAndMessage(kInvalid, c.problem));
  }
  CHECK(BadCases().size() >= 40);
}

TEST_CASE("good long URLs normalise to one expected spelling", "[lib/url]") {
  const UrlPolicy policy(TestOptions());
  for (const GoodCase& c : GoodCases()) {
    INFO("input: " << c.input.substr(0, 80));
    const absl::StatusOr<std::string> result = policy.Normalize(c.input);
    REQUIRE_THAT(result, IsOk());
    CHECK(*result == c.expected);
  }
  CHECK(GoodCases().size() >= 15);
}

TEST_CASE("normalising a normalised URL changes nothing", "[lib/url]") {
  const UrlPolicy policy(TestOptions());
  for (const GoodCase& c : GoodCases()) {
    INFO("input: " << c.input.substr(0, 80));
    const absl::StatusOr<std::string> once = policy.Normalize(c.input);
    REQUIRE_THAT(once, IsOk());
    const absl::StatusOr<std::string> twice = policy.Normalize(*once);
    REQUIRE_THAT(twice, IsOk());
    CHECK(*twice == *once);
  }
}

TEST_CASE("the allow list decides the schemes, case-insensitively", "[lib/url]") {
  UrlPolicyOptions options;
  options.allowed_schemes = {"HTTPS"};
  const UrlPolicy policy(options);
  CHECK(policy.Normalize("HTTPS://example.com").value() == "https://example.com/");
  CHECK_THAT(policy.Normalize("http://example.com/"),
             HasCodeAndMessage(kInvalid, R"(scheme "http" is not allowed (allowed: https))"));
}

TEST_CASE("the length limit is configurable and applies to the result too", "[lib/url]") {
  UrlPolicyOptions options;
  options.max_length = 24;
  const UrlPolicy policy(options);
  CHECK(policy.Normalize("http://example.com/abcde").value() == "http://example.com/abcde");
  CHECK_THAT(policy.Normalize("http://example.com/abcdef"),
             HasCodeAndMessage(kInvalid, "is 25 bytes, longer than the limit of 24"));
  CHECK_THAT(policy.Normalize("http://example.com/ü"),  // 21 bytes raw
             HasCodeAndMessage(kInvalid, "is 25 bytes once normalised"));
}

TEST_CASE("without domain lists every well-formed host is allowed", "[lib/url]") {
  const UrlPolicy policy(UrlPolicyOptions{});
  CHECK(policy.Normalize("http://sho.rt/x").value() == "http://sho.rt/x");
  CHECK(policy.Normalize("http://evil.example/").value() == "http://evil.example/");
}

TEST_CASE("SetDeniedDomains replaces the whole deny list", "[lib/url]") {
  UrlPolicy policy(TestOptions());
  CHECK(policy.DeniedDomainCount() == 4);
  REQUIRE_THAT(policy.Normalize("http://new.example/"), IsOk());
  policy.SetDeniedDomains({"New.Example.", "new.example", "b.new.example"});
  CHECK(policy.DeniedDomainCount() == 2);
  CHECK_THAT(policy.Normalize("http://new.example/"),
             HasCodeAndMessage(kInvalid, R"(host "new.example" is on the deny list)"));
  // The most specific entry is the one named.
  CHECK_THAT(policy.Normalize("http://a.b.new.example/"),
             HasCodeAndMessage(kInvalid, R"((a subdomain of "b.new.example"))"));
  CHECK_THAT(policy.Normalize("http://evil.example/"), IsOk());
  // The short domains are not part of the deny list and stay.
  CHECK_THAT(policy.Normalize("http://sho.rt/x"), HasCodeAndMessage(kInvalid, "short domains"));
  policy.SetDeniedDomains({});
  CHECK(policy.DeniedDomainCount() == 0);
  CHECK_THAT(policy.Normalize("http://new.example/"), IsOk());
}

TEST_CASE("a long deny list is searched by label", "[lib/url]") {
  std::vector<std::string> domains;
  for (int i = 0; i < 100000; ++i) domains.push_back(absl::StrCat("d", i, ".example"));
  UrlPolicyOptions options;
  options.denied_domains = domains;
  const UrlPolicy policy(options);
  CHECK(policy.DeniedDomainCount() == 100000);
  CHECK_THAT(policy.Normalize("http://x.y.d99999.example/"),
             HasCodeAndMessage(kInvalid, R"((a subdomain of "d99999.example"))"));
  CHECK_THAT(policy.Normalize("http://d100000.example/"), IsOk());
  CHECK_THAT(policy.Normalize("http://example.org/"), IsOk());
}

TEST_CASE("scheme lists are checked for scheme syntax", "[lib/url]") {
  CHECK_THAT(ValidateSchemes({"http", "https", "HTTP", "svn+ssh", "a.b-c"}), IsOk());
  CHECK_THAT(ValidateSchemes({}), HasCodeAndMessage(kInvalid, "at least one scheme"));
  for (const std::string bad : {"", "http:", "1http", "ht tp", "https://", "+x", "é"}) {
    INFO("scheme: " << bad);
    CHECK_THAT(ValidateSchemes({"http", bad}),
               HasCodeAndMessage(kInvalid, absl::StrCat("scheme \"", bad, "\" is not a scheme")));
  }
}

TEST_CASE("domain list entries have one canonical spelling or are refused", "[lib/url]") {
  CHECK(CanonicalDomain("Evil.Example.").value() == "evil.example");
  CHECK(CanonicalDomain("..evil.example").value() == "evil.example");
  CHECK(CanonicalDomain("bücher.de").value() == "xn--bcher-kva.de");
  CHECK(CanonicalDomain("::2").value() == "[::2]");
  CHECK(CanonicalDomain("[::2]").value() == "[::2]");
  CHECK(CanonicalDomain("192.0.2.1").value() == "192.0.2.1");
  CHECK_THAT(CanonicalDomain("https://evil.example/"), HasCodeAndMessage(kInvalid, "not a URL"));
  CHECK_THAT(CanonicalDomain("evil.example/path"), HasCodeAndMessage(kInvalid, "not a URL"));
  CHECK_THAT(CanonicalDomain("*.evil.example"), HasCodeAndMessage(kInvalid, "no wildcards"));
  CHECK_THAT(CanonicalDomain(" evil.example"), HasCodeAndMessage(kInvalid, "space or control"));
  CHECK_THAT(CanonicalDomain(""), HasCodeAndMessage(kInvalid, R"("" is not a domain name)"));
  CHECK_THAT(CanonicalDomain("..."), HasCodeAndMessage(kInvalid, "is not a domain name"));
  CHECK_THAT(CanonicalDomain("evil..example"), HasCodeAndMessage(kInvalid, "empty label"));
  CHECK_THAT(CanonicalDomain("evil.999"), HasCodeAndMessage(kInvalid, "not a valid IPv4"));
}

// Found by tests/fuzz/url_policy_fuzz.cc: "[." was a canonical domain (a
// bracket was taken as an IPv6 literal without looking for the closing one
// or at what is inside), and "::0:2" stayed "[::0:2]" while libcurl gives
// the host of "http://[::0:2]/" as "[::2]", so that entry denied nothing.
TEST_CASE("IPv6 list entries are checked and spelled as libcurl spells hosts", "[lib/url]") {
  for (const char* entry :
       {"[.", "[", "[]", "[::1", "[abc", "[::1]x]", "[1:2]", "[::g]", "[1.2.3.4]"}) {
    INFO(entry);
    CHECK_THAT(CanonicalDomain(entry), HasCodeAndMessage(kInvalid, "bad IPv6 literal"));
  }
  CHECK(CanonicalDomain("::0:2").value() == "[::2]");
  CHECK(CanonicalDomain("[2001:DB8:0::1]").value() == "[2001:db8::1]");
  CHECK(CanonicalDomain("::FFFF:0102:0304").value() == "[::ffff:1.2.3.4]");
  UrlPolicyOptions options;
  options.denied_domains = {"0:0::2", "2001:DB8:0:0::1"};
  const UrlPolicy policy(options);
  CHECK_THAT(policy.Normalize("http://[::2]/"), HasCodeAndMessage(kInvalid, "deny list"));
  CHECK_THAT(policy.Normalize("http://[2001:db8::0:1]/"), HasCodeAndMessage(kInvalid, "deny list"));
  CHECK(policy.Normalize("http://[::FFFF:1.2.3.4]:8080/").value_or("") ==
        "http://[::ffff:1.2.3.4]:8080/");
}

// Found by tests/fuzz/url_policy_fuzz.cc: libcurl rewrites the IPv4
// spellings it knows ("0x7f.1", "2130706433") as dotted quads, but not when
// the host has a trailing dot, which we drop afterwards; "http://0x7f000001./"
// then became "http://0x7f000001/", which browsers (WHATWG's "ends in a
// number" rule) and libcurl open as 127.0.0.1, and which normalised again to
// "http://127.0.0.1/". A host whose last label is a number, decimal or
// "0x" hex, must be a plain dotted quad.
TEST_CASE("a host ending in a number is a plain dotted quad or refused, never renamed later",
          "[lib/url]") {
  const UrlPolicy policy(TestOptions());
  for (const char* input :
       {"http://0x7f.//p:0httx7f1/", "http://0x7f000001./", "http://2130706433./",
        "http://1.2.3.0x4./", "http://0x./", "http://a.0x1f/", "http://example.0X10/",
        "http://1.2.3.09/", "http://01.2.3.4./"}) {
    INFO(input);
    CHECK_THAT(policy.Normalize(input),
               HasCodeAndMessage(kInvalid, "has a malformed host (not a valid IPv4 address)"));
  }
  // The spellings libcurl reads as an address become that address, which
  // the private-target rule then sees (see the tables below).
  CHECK_THAT(policy.Normalize("http://0X7F.1/"),
             HasCodeAndMessage(kInvalid, R"(host "127.0.0.1" is a loopback address)"));
  UrlPolicyOptions intranet = TestOptions();
  intranet.allow_private_targets = true;
  const UrlPolicy allowing(intranet);
  CHECK(allowing.Normalize("http://0X7F.1/").value_or("") == "http://127.0.0.1/");
  CHECK(allowing.Normalize("http://127.0.0.1./").value_or("") == "http://127.0.0.1/");
  CHECK(policy.Normalize("http://a.0x1g/").value_or("") == "http://a.0x1g/");
  CHECK(policy.Normalize("http://0x7f.example/").value_or("") == "http://0x7f.example/");
}

TEST_CASE("normalize is safe to call from many threads", "[lib/url]") {
  const UrlPolicy policy(TestOptions());
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&policy, &mismatches, t] {
      for (int round = 0; round < 50; ++round) {
        for (const GoodCase& c : GoodCases()) {
          const absl::StatusOr<std::string> r = policy.Normalize(c.input);
          if (!r.ok() || *r != c.expected) ++mismatches[t];
        }
        for (const BadCase& c : BadCases()) {
          if (policy.Normalize(c.input).ok()) ++mismatches[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}

}  // namespace
}  // namespace shortener::url
