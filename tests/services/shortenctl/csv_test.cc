// The CSV reader and writer of shortenctl (csv.h): RFC 4180 quoting, line
// ends, the byte order mark, the problems that spoil one record and the
// error that ends the input, the limits, positions for resuming, and that
// what the writer writes reads back unchanged.
#include "services/shortenctl/csv.h"

#include <catch2/catch.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"

namespace shortener::ctl {
namespace {

using Rows = std::vector<std::vector<std::string>>;

// Every record of `text`; fails the test on an error.
std::vector<CsvRecord> ReadAll(const std::string& text, CsvLimits limits = {}) {
  std::istringstream in(text);
  CsvReader reader(in, {}, limits);
  std::vector<CsvRecord> records;
  for (;;) {
    absl::StatusOr<std::optional<CsvRecord>> next = reader.Next();
    REQUIRE(next.ok());
    if (!next->has_value()) return records;
    records.push_back(**next);
  }
}

Rows FieldsOf(const std::vector<CsvRecord>& records) {
  Rows rows;
  for (const CsvRecord& r : records) rows.push_back(r.fields);
  return rows;
}

TEST_CASE("csv reads plain, quoted and empty fields with CRLF, LF or CR line ends",
          "[services/shortenctl][csv]") {
  const Rows expected = {{"a", "b", "c"}, {"1", "", "x,y"}, {"", "say \"hi\"", ""}};
  for (const std::string end : {"\r\n", "\n", "\r"}) {
    const std::string text =
        "a,b,c" + end + "1,,\"x,y\"" + end + ",\"say \"\"hi\"\"\"," + end;  // no end at the end
    INFO("line end " << (end == "\r\n" ? "CRLF" : end == "\n" ? "LF" : "CR"));
    const std::vector<CsvRecord> records = ReadAll(text);
    CHECK(FieldsOf(records) == expected);
    REQUIRE(records.size() == 3);
    CHECK(records[2].line == 3);
    for (const CsvRecord& r : records) CHECK(r.problem.empty());
  }
}

TEST_CASE("csv keeps line ends inside quotes and counts their lines",
          "[services/shortenctl][csv]") {
  const std::vector<CsvRecord> records =
      ReadAll("h1,h2\r\n\"two\r\nlines\",\"and\nmore\"\r\nnext,row\r\n");
  REQUIRE(records.size() == 3);
  CHECK(records[1].fields == std::vector<std::string>{"two\r\nlines", "and\nmore"});
  CHECK(records[1].line == 2);
  CHECK(records[2].line == 5);  // each line end inside the quotes is a line
}

TEST_CASE("csv skips a byte order mark and blank lines", "[services/shortenctl][csv]") {
  const std::vector<CsvRecord> records = ReadAll("\xEF\xBB\xBFlong_url\r\n\r\n\nhttps://a/\r\n\n");
  CHECK(FieldsOf(records) == Rows{{"long_url"}, {"https://a/"}});
  CHECK(records[1].line == 4);
  // Only at the very start: later it is data.
  CHECK(FieldsOf(ReadAll("a\n\xEF\xBB\xBF\n")) == Rows{{"a"}, {"\xEF\xBB\xBF"}});
}

TEST_CASE("csv names the column of a stray quote or text after a closing quote, and goes on",
          "[services/shortenctl][csv]") {
  const std::vector<CsvRecord> records = ReadAll("a,b\nx,ab\"c\n\"q\"z,y\ngood,row\n");
  REQUIRE(records.size() == 4);
  CHECK(records[1].problem ==
        "column 2: a quote inside an unquoted field (quote the whole field and double its "
        "quotes)");
  CHECK(records[1].fields == std::vector<std::string>{"x", "ab\"c"});
  CHECK(absl::StartsWith(records[2].problem, "column 1: text after the closing quote"));
  CHECK(records[3].problem.empty());
  CHECK(records[3].line == 4);
}

TEST_CASE("csv ends with an error naming where an unclosed quote starts",
          "[services/shortenctl][csv]") {
  std::istringstream in("a,b\n1,\"open\nstill open\n");
  CsvReader reader(in);
  REQUIRE(reader.Next().ok());
  absl::StatusOr<std::optional<CsvRecord>> bad = reader.Next();
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(bad.status().message() ==
        "line 2, column 2: quoted field not closed before the end of the input");
  CHECK(reader.Next().status() == bad.status());  // and stays so
}

TEST_CASE("csv cuts fields and records over their limits, and says so",
          "[services/shortenctl][csv]") {
  CsvLimits limits;
  limits.max_field_bytes = 4;
  limits.max_record_bytes = 10;
  limits.max_fields = 3;
  const std::vector<CsvRecord> records =
      ReadAll("abcdefgh,x\n1,2,3,4\nabcd,efgh,ijkl\nok\n", limits);
  REQUIRE(records.size() == 4);
  CHECK(records[0].fields == std::vector<std::string>{"abcd", "x"});
  CHECK(records[0].problem == "column 1: field longer than 4 bytes");
  CHECK(records[1].fields == std::vector<std::string>{"1", "2", "3"});
  CHECK(records[1].problem == "column 4: more than 3 fields");
  CHECK(records[2].problem == "column 3: record longer than 10 bytes");
  CHECK(records[3].problem.empty());
  // A huge quoted field costs no more than its limit.
  const std::string huge = "\"" + std::string(1 << 20, 'x') + "\"\nnext\n";
  const std::vector<CsvRecord> big = ReadAll(huge, limits);
  REQUIRE(big.size() == 2);
  CHECK(big[0].fields[0].size() == 4);
  CHECK(big[1].fields == std::vector<std::string>{"next"});
}

TEST_CASE("csv position says where a later reader goes on", "[services/shortenctl][csv]") {
  const std::string text = "\xEF\xBB\xBFh\r\n\"a\nb\"\r\nc\r\nd";
  std::istringstream in(text);
  CsvReader reader(in);
  REQUIRE(reader.Next().ok());
  REQUIRE(reader.Next().ok());
  const CsvPosition after = reader.position();
  CHECK(after.offset == 3 + 3 + 7);
  CHECK(after.line == 4);
  std::istringstream again(text);
  again.seekg(after.offset);
  CsvReader later(again, after);
  absl::StatusOr<std::optional<CsvRecord>> c = later.Next();
  REQUIRE(c.ok());
  CHECK((*c)->fields == std::vector<std::string>{"c"});
  CHECK((*c)->line == 4);
  REQUIRE(later.Next().ok());
  CHECK(later.position().offset == static_cast<int64_t>(text.size()));
}

TEST_CASE("csv reads and writes another separator", "[services/shortenctl][csv]") {
  std::istringstream in("long_url;code\r\n\"https://e.com/?a=1;b=2\";x,y\r\n");
  CsvReader reader(in, {}, {}, ';');
  REQUIRE(reader.Next().ok());
  absl::StatusOr<std::optional<CsvRecord>> row = reader.Next();
  REQUIRE(row.ok());
  CHECK((*row)->fields == std::vector<std::string>{"https://e.com/?a=1;b=2", "x,y"});
  CHECK(FormatCsvRecord({"a;b", "c,d", "-e"}, true, ';') == "\"a;b\";c,d;'-e\r\n");
  CHECK(FormatCsvRecord({"a", "b"}, false, '\t') == "a\tb\r\n");
  CHECK(*ParseSeparator("") == ',');
  CHECK(*ParseSeparator(";") == ';');
  CHECK(*ParseSeparator("tab") == '\t');
  CHECK(ParseSeparator(":").status().message() ==
        "--delimiter: must be \",\" (the default), \";\", tab or \"|\", got \":\"");
}

TEST_CASE("csv quotes what needs it and guards formulas", "[services/shortenctl][csv]") {
  CHECK(CsvQuote("plain") == "plain");
  CHECK(CsvQuote("a,b") == "\"a,b\"");
  CHECK(CsvQuote("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(CsvQuote("two\nlines") == "\"two\nlines\"");
  CHECK(CsvCell("-abc") == "'-abc");
  CHECK(CsvCell("=1+2,3") == "\"'=1+2,3\"");
  CHECK(StripFormulaGuard("'-abc") == "-abc");
  CHECK(StripFormulaGuard("'abc") == "'abc");
  CHECK(StripFormulaGuard("'") == "'");
  CHECK(FormatCsvRecord({"a", "-b", "c,d"}) == "a,'-b,\"c,d\"\r\n");
  CHECK(FormatCsvRecord({"-b"}, /*guard=*/false) == "-b\r\n");
  CHECK(FormatCsvRecord({""}) == "\"\"\r\n");
}

TEST_CASE("csv reads back exactly what it writes, for random cells", "[services/shortenctl][csv]") {
  std::mt19937 random(20261129);
  const std::string alphabet = "ab,\"\r\n '=-\xC3\xA9";
  for (int round = 0; round < 500; ++round) {
    Rows rows(1 + random() % 4);
    for (auto& row : rows) {
      row.resize(1 + random() % 4);
      for (std::string& cell : row) {
        for (int n = random() % 6; n > 0; --n) cell += alphabet[random() % alphabet.size()];
      }
    }
    std::string text;
    for (const auto& row : rows) text += FormatCsvRecord(row, /*guard=*/false);
    INFO(text);
    const std::vector<CsvRecord> records = ReadAll(text);
    CHECK(FieldsOf(records) == rows);
    for (const CsvRecord& r : records) CHECK(r.problem.empty());
  }
}

}  // namespace
}  // namespace shortener::ctl
