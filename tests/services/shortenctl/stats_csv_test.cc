// shortenctl stats --csv: the exact bytes of both tables, RFC 4180 quoting,
// the formula-injection guard, top lists found by reflection, and where the
// tables go (stdout, a file, "-").
#include "services/shortenctl/stats_csv.h"

#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/time/time.h"
#include "lib/grpcutil/status.h"

namespace shortener::ctl {
namespace {

google::protobuf::Timestamp Hour(int day, int hour) {
  return grpcutil::ToProtoTimestamp(
      absl::FromCivil(absl::CivilHour(2030, 1, day, hour), absl::UTCTimeZone()));
}

void Add(google::protobuf::RepeatedPtrField<v1::CountedValue>* list, const std::string& value,
         int64_t clicks) {
  v1::CountedValue* entry = list->Add();
  entry->set_value(value);
  entry->set_clicks(clicks);
}

v1::GetClickStatsResponse SampleResponse() {
  v1::GetClickStatsResponse response;
  const int64_t counts[][3] = {{2, 0, 2}, {1, 1, 1}};
  for (int h = 0; h < 2; ++h) {
    v1::ClickBucket* bucket = response.add_buckets();
    *bucket->mutable_start_time() = Hour(1, h);
    bucket->set_human_clicks(counts[h][0]);
    bucket->set_bot_clicks(counts[h][1]);
    bucket->set_unique_visitors(counts[h][2]);
  }
  Add(response.mutable_top_browsers(), "Chrome", 2);
  Add(response.mutable_top_browsers(), "Firefox", 1);
  Add(response.mutable_top_referrers(), "=HYPERLINK(\"http://x.example\",\"a,b\")", 1);
  return response;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh private directory, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    char dir_template[] = "/tmp/stats_csv_test.XXXXXX";
    REQUIRE(mkdtemp(dir_template) != nullptr);
    path_ = dir_template;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Path(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

TEST_CASE("CsvCell quotes cells with a comma, a quote, CR or LF, and only those",
          "[services/shortenctl][csv]") {
  CHECK(CsvCell("example.com") == "example.com");
  CHECK(CsvCell("") == "");
  CHECK(CsvCell("Washington, D.C.") == "\"Washington, D.C.\"");
  CHECK(CsvCell("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(CsvCell("a\nb") == "\"a\nb\"");
  CHECK(CsvCell("a\rb") == "\"a\rb\"");
  CHECK(CsvCell("it's; fine") == "it's; fine");
  CHECK(CsvCell("Zürich") == "Zürich");
}

TEST_CASE("CsvCell makes a value that a spreadsheet would run as a formula text",
          "[services/shortenctl][csv][hostile]") {
  CHECK(CsvCell("=1+1") == "'=1+1");
  CHECK(CsvCell("+1") == "'+1");
  CHECK(CsvCell("-cmd.example") == "'-cmd.example");
  CHECK(CsvCell("@SUM(A1)") == "'@SUM(A1)");
  CHECK(CsvCell("\t=1") == "'\t=1");
  CHECK(CsvCell("\r=1") == "\"'\r=1\"");
  CHECK(CsvCell("=HYPERLINK(\"http://x\",\"a\")") == "\"'=HYPERLINK(\"\"http://x\"\",\"\"a\"\")\"");
  // Only the first character counts.
  CHECK(CsvCell("a=1") == "a=1");
  CHECK(CsvCell(" =1") == " =1");
}

TEST_CASE("the buckets table is a header and a row per bucket, times in RFC 3339 UTC, CRLF",
          "[services/shortenctl][csv]") {
  CHECK(FormatBucketsCsv(SampleResponse()) ==
        "start_time,human_clicks,bot_clicks,unique_visitors\r\n"
        "2030-01-01T00:00:00Z,2,0,2\r\n"
        "2030-01-01T01:00:00Z,1,1,1\r\n");
  CHECK(FormatBucketsCsv(v1::GetClickStatsResponse()) ==
        "start_time,human_clicks,bot_clicks,unique_visitors\r\n");
}

TEST_CASE("the top-lists table has every non-empty top list in field order, ranked from 1",
          "[services/shortenctl][csv]") {
  CHECK(FormatTopListsCsv(SampleResponse()) ==
        "list,rank,value,clicks\r\n"
        "browsers,1,Chrome,2\r\n"
        "browsers,2,Firefox,1\r\n"
        "referrers,1,\"'=HYPERLINK(\"\"http://x.example\"\",\"\"a,b\"\")\",1\r\n");
  CHECK(FormatTopListsCsv(v1::GetClickStatsResponse()) == "list,rank,value,clicks\r\n");
}

TEST_CASE("every top_* list of the response appears, found by reflection",
          "[services/shortenctl][csv]") {
  v1::GetClickStatsResponse response;
  const google::protobuf::Descriptor* descriptor = response.GetDescriptor();
  std::string expected = "list,rank,value,clicks\r\n";
  int lists = 0;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    if (field->message_type() != v1::CountedValue::descriptor()) continue;
    REQUIRE(field->name().rfind("top_", 0) == 0);
    const std::string list = field->name().substr(4);
    v1::CountedValue* entry =
        static_cast<v1::CountedValue*>(response.GetReflection()->AddMessage(&response, field));
    entry->set_value("v-" + list);
    entry->set_clicks(i);
    expected += list + ",1,v-" + list + "," + std::to_string(i) + "\r\n";
    ++lists;
  }
  CHECK(lists >= 5);  // browsers, os, devices, countries, referrers at least
  CHECK(FormatTopListsCsv(response) == expected);
}

TEST_CASE("WriteClickStatsCsv: buckets to stdout, top lists to a file or after an empty line",
          "[services/shortenctl][csv]") {
  TempDir dir;
  std::istringstream in;
  std::ostringstream out, err;
  StatsFlags flags;
  flags.csv = true;
  CHECK(WriteClickStatsCsv(flags, SampleResponse(), {in, out, err}) == kExitOk);
  CHECK(out.str() == FormatBucketsCsv(SampleResponse()));

  out.str("");
  flags.csv_top = dir.Path("top.csv");
  std::ofstream(flags.csv_top) << "an older, longer export that must not survive\n";
  REQUIRE(CheckCsvFlags(flags, /*json=*/false).ok());
  CHECK(ReadFile(flags.csv_top) == "an older, longer export that must not survive\n");
  CHECK(WriteClickStatsCsv(flags, SampleResponse(), {in, out, err}) == kExitOk);
  CHECK(out.str() == FormatBucketsCsv(SampleResponse()));
  CHECK(ReadFile(flags.csv_top) == FormatTopListsCsv(SampleResponse()));

  out.str("");
  flags.csv_top = "-";
  CHECK(WriteClickStatsCsv(flags, SampleResponse(), {in, out, err}) == kExitOk);
  CHECK(out.str() ==
        FormatBucketsCsv(SampleResponse()) + "\r\n" + FormatTopListsCsv(SampleResponse()));
  CHECK(err.str().empty());
}

TEST_CASE("CSV output refuses --json and a --csv_top file it cannot write",
          "[services/shortenctl][csv]") {
  TempDir dir;
  StatsFlags flags;
  CHECK(CheckCsvFlags(flags, /*json=*/true).ok());  // no CSV asked for
  flags.csv = true;
  CHECK(CheckCsvFlags(flags, false).ok());
  CHECK(CheckCsvFlags(flags, true).message() == "--csv and --csv_top do not go with --json");
  flags.csv_top = dir.Path("missing-dir/top.csv");
  CHECK(CheckCsvFlags(flags, false).message() ==
        "--csv_top: cannot write " + flags.csv_top + ": No such file or directory");

  // A file that vanishes between the check and the write is reported, exit 1.
  std::istringstream in;
  std::ostringstream out, err;
  CHECK(WriteClickStatsCsv(flags, SampleResponse(), {in, out, err}) == kExitServiceError);
  CHECK(err.str() == "shortenctl: cannot write " + flags.csv_top + ": No such file or directory\n");
}

}  // namespace
}  // namespace shortener::ctl
