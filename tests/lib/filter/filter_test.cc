// lib/filter: each rule of the grammar in filter.h, each error with its
// exact message, the bounds at and past their limits, and Format's round
// trip.
#include "lib/filter/filter.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"

namespace shortener::filter {
namespace {

Term MakeTerm(std::string field, Op op, bool quoted, std::string value) {
  Term term;
  term.field = std::move(field);
  term.op = op;
  term.quoted = quoted;
  term.value = std::move(value);
  return term;
}

std::vector<Term> TermsOf(absl::string_view text) {
  const absl::StatusOr<Filter> parsed = ParseFilter(text);
  INFO("filter: " << std::string(text));
  REQUIRE(parsed.ok());
  return parsed->terms;
}

// The message of the INVALID_ARGUMENT `text` must fail with.
std::string ErrorOf(absl::string_view text) {
  const absl::StatusOr<Filter> parsed = ParseFilter(text);
  INFO("filter: " << std::string(text));
  REQUIRE_FALSE(parsed.ok());
  REQUIRE(parsed.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(parsed.status().message());
}

TEST_CASE("an empty or blank filter has no terms", "[lib/filter]") {
  CHECK(TermsOf("").empty());
  CHECK(TermsOf(" \t\r\n ").empty());
}

TEST_CASE("a term is a field, a comparator and a value", "[lib/filter]") {
  CHECK(TermsOf("labels.campaign = \"spring-sale\"") ==
        std::vector<Term>{MakeTerm("labels.campaign", Op::kEq, true, "spring-sale")});
  CHECK(TermsOf("state=ACTIVE") == std::vector<Term>{MakeTerm("state", Op::kEq, false, "ACTIVE")});
}

TEST_CASE("every comparator parses to its op and prints back as written", "[lib/filter]") {
  const std::vector<std::pair<std::string, Op>> cases = {
      {"=", Op::kEq},  {"!=", Op::kNe}, {"<", Op::kLt},
      {"<=", Op::kLe}, {">", Op::kGt},  {">=", Op::kGe},
  };
  for (const auto& [text, op] : cases) {
    CHECK(TermsOf(absl::StrCat("a", text, "1")) ==
          std::vector<Term>{MakeTerm("a", op, false, "1")});
    CHECK(TermsOf(absl::StrCat("a ", text, " 1")) ==
          std::vector<Term>{MakeTerm("a", op, false, "1")});
    CHECK(OpText(op) == text);
  }
}

TEST_CASE("field segments start with a letter or _ and hold letters, digits, _ and -",
          "[lib/filter]") {
  CHECK(TermsOf("labels.utm-source_2 = x")[0].field == "labels.utm-source_2");
  CHECK(TermsOf("_a.B9.c-d = x")[0].field == "_a.B9.c-d");
  CHECK(ErrorOf("9a = x") == "filter: at byte 0: expected a field, got \"9a\"");
  CHECK(ErrorOf("labels. = x") ==
        "filter: at byte 7: expected a field name after \".\", got \" \"");
  CHECK(ErrorOf("labels..a = x") ==
        "filter: at byte 7: expected a field name after \".\", got \".a\"");
  CHECK(ErrorOf("labels.-a = x") ==
        "filter: at byte 7: expected a field name after \".\", got \"-a\"");
  CHECK(ErrorOf("labels.") ==
        "filter: at byte 7: expected a field name after \".\", got the end of the filter");
  CHECK(ErrorOf("\"state\" = x") == "filter: at byte 0: expected a field, got \"\\\"\"");
}

TEST_CASE("bare values are runs of letters, digits and _ . : + -", "[lib/filter]") {
  CHECK(TermsOf("create_time > 2026-11-01T00:00:00Z") ==
        std::vector<Term>{MakeTerm("create_time", Op::kGt, false, "2026-11-01T00:00:00Z")});
  CHECK(TermsOf("n >= -1.5e+3")[0].value == "-1.5e+3");
  CHECK(TermsOf("a = _x")[0].value == "_x");
  CHECK(ErrorOf("a = x*") == "filter: at byte 5: expected AND or the end of the filter, got \"*\"");
  CHECK(ErrorOf("a = é") == "filter: at byte 4: expected a value after \"=\", got \"é\"");
}

TEST_CASE("quoted values take double or single quotes and three escapes", "[lib/filter]") {
  CHECK(TermsOf("a = \"x y\"") == std::vector<Term>{MakeTerm("a", Op::kEq, true, "x y")});
  CHECK(TermsOf("a = 'x y'") == std::vector<Term>{MakeTerm("a", Op::kEq, true, "x y")});
  CHECK(TermsOf("a = \"\"") == std::vector<Term>{MakeTerm("a", Op::kEq, true, "")});
  CHECK(TermsOf(R"(a = "q\"s\'b\\")")[0].value == R"(q"s'b\)");
  CHECK(TermsOf(R"(a = 'q\"s\'b\\')")[0].value == R"(q"s'b\)");
  CHECK(TermsOf(R"(a = "it's")")[0].value == "it's");
  CHECK(TermsOf(R"(a = 'say "hi"')")[0].value == "say \"hi\"");
  CHECK(TermsOf("a = \"Zürich = AND (x)\"")[0].value == "Zürich = AND (x)");
  CHECK(ErrorOf(R"(a = "x\n")") ==
        R"(filter: at byte 6: unsupported escape "\n" in a string (only \", \' and \\))");
  CHECK(ErrorOf("a = \"\\é\"") ==
        "filter: at byte 5: unsupported escape \"\\é\" in a string (only \\\", \\' and \\\\)");
}

TEST_CASE("an unterminated string is named at its opening quote", "[lib/filter]") {
  CHECK(ErrorOf("a = \"abc") == "filter: at byte 4: unterminated string");
  CHECK(ErrorOf("a = 'abc\"") == "filter: at byte 4: unterminated string");
  CHECK(ErrorOf("a = \"abc\\\"") == "filter: at byte 4: unterminated string");
  CHECK(ErrorOf("a = \"abc\\") == "filter: at byte 4: unterminated string");
}

TEST_CASE("terms are joined by AND, which is case sensitive", "[lib/filter]") {
  CHECK(TermsOf("labels.campaign = \"spring\" AND state = ACTIVE AND create_time > "
                "\"2026-11-01T00:00:00Z\" AND long_url_host = \"example.com\"") ==
        std::vector<Term>{MakeTerm("labels.campaign", Op::kEq, true, "spring"),
                          MakeTerm("state", Op::kEq, false, "ACTIVE"),
                          MakeTerm("create_time", Op::kGt, true, "2026-11-01T00:00:00Z"),
                          MakeTerm("long_url_host", Op::kEq, true, "example.com")});
  CHECK(TermsOf("a=1\tAND\nb='2'\r\n").size() == 2);
  CHECK(TermsOf("a=\"1\"AND b=2").size() == 2);
  CHECK(ErrorOf("a = 1 and b = 2") ==
        "filter: at byte 6: \"and\" is not an operator: AND is upper case");
  CHECK(ErrorOf("a = 1 And b = 2") ==
        "filter: at byte 6: expected AND or the end of the filter, got \"And\"");
  CHECK(ErrorOf("a = 1 b = 2") ==
        "filter: at byte 6: expected AND or the end of the filter, got \"b\"");
  CHECK(ErrorOf("a = 1 ANDb = 2") ==
        "filter: at byte 6: expected AND or the end of the filter, got \"ANDb\"");
  CHECK(ErrorOf("a = 1 AND") == "filter: at byte 9: expected a term after AND");
  CHECK(ErrorOf("a = 1 AND  ") == "filter: at byte 11: expected a term after AND");
  CHECK(ErrorOf("AND a = 1") == "filter: at byte 0: expected a field, got \"AND\"");
  CHECK(ErrorOf("a = 1 AND AND b = 2") == "filter: at byte 10: expected a field, got \"AND\"");
}

TEST_CASE("a missing comparator or value is named with what stands there", "[lib/filter]") {
  CHECK(ErrorOf("labels.campaign =") == "filter: at byte 17: expected a value after \"=\"");
  CHECK(ErrorOf("a <= ") == "filter: at byte 5: expected a value after \"<=\"");
  CHECK(ErrorOf("a == 1") == "filter: at byte 3: expected a value after \"=\", got \"=\"");
  CHECK(ErrorOf("a <> 1") == "filter: at byte 3: expected a value after \"<\", got \">\"");
  CHECK(ErrorOf("a") == "filter: at byte 1: expected a comparison operator (=, !=, <, <=, >, >=)");
  CHECK(ErrorOf("a ! 1") ==
        "filter: at byte 2: expected a comparison operator (=, !=, <, <=, >, >=), got \"!\"");
  CHECK(ErrorOf("a ~ 1") ==
        "filter: at byte 2: expected a comparison operator (=, !=, <, <=, >, >=), got \"~\"");
  CHECK(ErrorOf("a b") ==
        "filter: at byte 2: expected a comparison operator (=, !=, <, <=, >, >=), got \"b\"");
  CHECK(ErrorOf("= 1") == "filter: at byte 0: expected a field, got \"=\"");
}

TEST_CASE("the parts of AIP-160 we do not support each have their own message", "[lib/filter]") {
  CHECK(ErrorOf("a = 1 OR b = 2") ==
        "filter: at byte 6: OR is not supported: only AND joins terms");
  CHECK(ErrorOf("OR = 1") == "filter: at byte 0: OR is not supported: only AND joins terms");
  CHECK(ErrorOf("NOT a = 1") == "filter: at byte 0: NOT is not supported");
  CHECK(ErrorOf("a = 1 AND NOT b = 2") == "filter: at byte 10: NOT is not supported");
  CHECK(ErrorOf("-a = 1") == "filter: at byte 0: negation (\"-\") is not supported");
  CHECK(ErrorOf("(a = 1)") == "filter: at byte 0: parentheses are not supported");
  CHECK(ErrorOf("a = 1 AND (b = 2)") == "filter: at byte 10: parentheses are not supported");
  CHECK(ErrorOf("a = 1)") == "filter: at byte 5: parentheses are not supported");
  CHECK(ErrorOf("a = (1)") == "filter: at byte 4: parentheses are not supported");
  CHECK(ErrorOf("labels:campaign") ==
        "filter: at byte 6: the has operator (\":\") is not supported");
  CHECK(ErrorOf("labels : \"x\"") ==
        "filter: at byte 7: the has operator (\":\") is not supported");
  CHECK(ErrorOf("regex(a, \"x\")") == "filter: at byte 0: function calls are not supported");
  CHECK(ErrorOf("a = 1 AND labels.has (x) = 1") ==
        "filter: at byte 10: function calls are not supported");
}

TEST_CASE("bad bytes: invalid UTF-8 and control characters", "[lib/filter][hostile]") {
  CHECK(ErrorOf("a = \"\xC3\"") == "filter: at byte 5: invalid UTF-8");
  CHECK(ErrorOf("a = \xFF") == "filter: at byte 4: invalid UTF-8");
  CHECK(ErrorOf("a = \"\xED\xA0\x80\"") == "filter: at byte 5: invalid UTF-8");
  CHECK(ErrorOf("a = 1\x01") == "filter: at byte 5: control character 0x01");
  CHECK(ErrorOf(std::string("a = \"x\0\"", 8)) == "filter: at byte 6: control character 0x00");
  CHECK(ErrorOf("a = \x7F") == "filter: at byte 4: control character 0x7F");
  CHECK(ErrorOf("a = \"x\ty\"") == "filter: at byte 6: control character 0x09 in a string");
  CHECK(ErrorOf("a = \"x\ny\"") == "filter: at byte 6: control character 0x0A in a string");
  CHECK(ErrorOf("a = \"x\\\ry\"") == "filter: at byte 7: control character 0x0D in a string");
  // The first bad byte is reported even after a syntax error.
  CHECK(ErrorOf("( \xFF") == "filter: at byte 2: invalid UTF-8");
}

TEST_CASE("the text is at most 4096 bytes", "[lib/filter][hostile]") {
  const std::string head = "a = \"";
  const std::string at_limit = head + std::string(kMaxFilterBytes - head.size() - 1, 'x') + "\"";
  REQUIRE(at_limit.size() == kMaxFilterBytes);
  CHECK(TermsOf(at_limit)[0].value.size() == kMaxFilterBytes - 6);
  CHECK(ErrorOf(at_limit + " ") == "filter: 4097 bytes, at most 4096");
  CHECK(ErrorOf(std::string(1 << 20, ' ')) == "filter: 1048576 bytes, at most 4096");
}

TEST_CASE("a filter has at most 32 terms", "[lib/filter][hostile]") {
  std::string text = "a0 = 0";
  for (int i = 1; i < 32; ++i) absl::StrAppend(&text, " AND a", i, " = ", i);
  CHECK(TermsOf(text).size() == 32);
  const size_t next = text.size() + 5;
  absl::StrAppend(&text, " AND a32 = 32");
  CHECK(ErrorOf(text) == absl::StrCat("filter: at byte ", next, ": more than 32 terms"));
}

TEST_CASE("a long word in a message is cut at 32 bytes", "[lib/filter]") {
  CHECK(ErrorOf("a = 1 " + std::string(40, 'b')) ==
        "filter: at byte 6: expected AND or the end of the filter, got \"" + std::string(32, 'b') +
            "...\"");
}

TEST_CASE("Format prints the canonical text, which parses back to the same terms", "[lib/filter]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", ""},
      {"  a=1  ", "a = 1"},
      {"labels.campaign='spring'AND state!=ACTIVE",
       "labels.campaign = \"spring\" AND state != ACTIVE"},
      {R"(a<='q\"s\'b\\' AND b>"" AND c<x AND d>=-1)",
       R"(a <= "q\"s'b\\" AND b > "" AND c < x AND d >= -1)"},
  };
  for (const auto& [text, canonical] : cases) {
    const absl::StatusOr<Filter> parsed = ParseFilter(text);
    REQUIRE(parsed.ok());
    CHECK(Format(*parsed) == canonical);
    CHECK(TermsOf(canonical) == parsed->terms);
  }
}

}  // namespace
}  // namespace shortener::filter
