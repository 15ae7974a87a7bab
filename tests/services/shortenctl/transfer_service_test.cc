// shortenctl import and export against the real shorten-service on a
// private PostgreSQL cluster (ctl_service_fixture.h): aliases, labels,
// expiry and the service's refusals per row; a second run that creates
// nothing; an import killed half-way and run again; export with a label
// filter re-imported by another tenant; other shorteners' headers mapped
// with --columns.
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tests/services/shortenctl/ctl_service_fixture.h"
#include "tests/support/subprocess.h"

namespace shortener::testing {
namespace {

std::vector<std::string> CsvLines(const std::string& text) {
  return absl::StrSplit(text, "\r\n", absl::SkipEmpty());
}

std::string Write(CtlServiceFixture& f, const std::string& name, const std::string& text) {
  std::ofstream(f.Path(name), std::ios::binary) << text;
  return f.Path(name);
}

// The long_url column (the second) of an export's rows, header left out.
std::set<std::string> ExportedUrls(const std::string& text) {
  std::set<std::string> urls;
  const std::vector<std::string> lines = CsvLines(text);
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
    if (cells.size() > 1) urls.insert(cells[1]);
  }
  return urls;
}

TEST_CASE("shortenctl import keeps codes as aliases, sets labels and expiry, and rejects rows",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  CreatedKey key = CreateKey(f, "ctl-import", "shorten,stats");
  const std::string with_key = "--api_key_file=" + key.file;
  const std::string file =
      Write(f, "import.csv",
            "\xEF\xBB\xBF"
            "code,long_url,labels,expire_time,redirect_type,max_clicks\r\n"
            "imp-sale,https://example.com/imp/1,\"campaign=imp,channel=sms\",2099-01-01T00:00:00Z,"
            "308,5\r\n"
            ",https://example.com/imp/2,campaign=imp,,,\r\n"
            "Ab3dE5g,https://example.com/imp/3,,,,\r\n"  // the shape of our generated codes
            "healthz,https://example.com/imp/4,,,,\r\n"  // a reserved path
            "imp-bad-url,javascript:alert(1),,,,\r\n"    // the URL policy
            "imp-bad-label,https://example.com/imp/6,Campaign=X,,,\r\n"  // the label rule
            "imp-past,https://example.com/imp/7,,2020-01-01T00:00:00Z,,\r\n"
            "imp-quoted,\"https://example.com/imp/8?a=1,2\",,,,\r\n");
  const std::vector<std::string> args = {
      with_key, "import", file, "--rejects=" + f.Path("rej.csv"), "-o", f.Path("new.csv")};
  Outcome first = f.RunWithoutKey(args);
  INFO(first.output);
  CHECK(first.exit_code == 1);
  CHECK(absl::StrContains(first.err,
                          "import: 8 rows: 3 imported (3 created, 0 there before), 5 rejected"));
  CHECK(absl::StrContains(first.err, "; 2 rejected for their code: --codes=keep_or_new"));
  CHECK_FALSE(absl::StrContains(first.err, "\r"));  // no progress line: stderr is a file
  const std::vector<std::string> rejects = CsvLines(ReadFile(f.Path("rej.csv")));
  REQUIRE(rejects.size() == 6);
  CHECK(rejects[0] ==
        "code,long_url,labels,expire_time,redirect_type,max_clicks,import_line,import_error");
  CHECK(absl::StartsWith(rejects[1], "Ab3dE5g,https://example.com/imp/3,,,,,4,"));
  CHECK(absl::StrContains(rejects[1], "has the shape of a generated code"));
  CHECK(absl::StrContains(rejects[2],
                          ",5,\"INVALID_ARGUMENT: custom_alias: \"\"healthz\"\" is a "
                          "reserved path\""));
  CHECK(absl::StartsWith(rejects[3], "imp-bad-url,javascript:alert(1),,,,,6,"));
  CHECK(absl::StrContains(rejects[3], "INVALID_ARGUMENT: long_url"));
  CHECK(absl::StrContains(rejects[4], ",7,\"INVALID_ARGUMENT: labels"));
  CHECK(absl::StrContains(rejects[5], ",8,INVALID_ARGUMENT: expire_time"));

  Outcome got = f.RunWithoutKey({with_key, "get", "imp-sale"});
  CHECK(Row(got.out, "long_url") == "https://example.com/imp/1");
  CHECK(Row(got.out, "labels") == "campaign=imp,channel=sms");
  CHECK(Row(got.out, "expires") == "2099-01-01T00:00:00Z");
  CHECK(Row(got.out, "redirect") == "308");
  CHECK(Row(got.out, "budget") == "5 clicks");
  CHECK(Row(got.out, "owner") == "ctl-import");
  CHECK(Row(f.RunWithoutKey({with_key, "get", "imp-quoted"}).out, "long_url") ==
        "https://example.com/imp/8?a=1,2");
  const std::vector<std::string> created = CsvLines(ReadFile(f.Path("new.csv")));
  REQUIRE(created.size() == 4);
  CHECK(created[0] == "line,old_code,code,short_url,long_url,created");
  CHECK(created[1] == "2,imp-sale,imp-sale,https://sho.rt/imp-sale,https://example.com/imp/1,yes");
  CHECK(absl::StartsWith(created[2], "3,,"));

  // The same file again: the same links, nothing new, the same rejects.
  Outcome second = f.RunWithoutKey(args);
  CHECK(second.exit_code == 1);
  CHECK(
      absl::StrContains(second.err, "8 rows: 3 imported (0 created, 3 there before), 5 rejected"));
  CHECK(CsvLines(ReadFile(f.Path("rej.csv"))).size() == 6);
  Outcome listed = f.RunWithoutKey({with_key, "export"});
  CHECK(listed.exit_code == 0);
  CHECK(CsvLines(listed.out).size() == 4);  // header + 3 links
}

TEST_CASE("shortenctl import killed half-way goes on when run again, creating nothing twice",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  CreatedKey key = CreateKey(f, "ctl-resume", "shorten,stats");
  const std::string with_key = "--api_key_file=" + key.file;
  constexpr int kRows = 40000;
  std::string text = "long_url\n";
  for (int i = 0; i < kRows; ++i) absl::StrAppend(&text, "https://example.com/resume/", i, "\n");
  const std::string file = Write(f, "resume.csv", text);
  const std::string state = file + ".import-state";

  auto child = Subprocess::Spawn(
      {BinaryPath("shortenctl"), "--service=" + f.service().target(), with_key, "import", file},
      f.Path("resume.log"));
  REQUIRE(child.ok());
  // Killed (no chance to clean up) once it has saved some progress.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (!std::filesystem::exists(state) && child->running() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(2));
  }
  const bool interrupted = child->running() && std::filesystem::exists(state);
  child->Signal(SIGKILL);
  child->Wait(absl::Seconds(10));
  if (!interrupted)
    WARN("the import finished before it could be killed: only the re-run is tested");

  Outcome again = f.RunWithoutKey({with_key, "import", file});
  INFO(again.output);
  REQUIRE(again.exit_code == 0);
  if (interrupted) CHECK(absl::StrContains(again.err, "import: going on from line "));
  CHECK(
      absl::StrContains(again.err, absl::StrCat("import: ", kRows, " rows: ", kRows, " imported")));
  CHECK_FALSE(std::filesystem::exists(state));
  Outcome exported = f.RunWithoutKey({with_key, "export", "-o", f.Path("resume-out.csv")});
  REQUIRE(exported.exit_code == 0);
  CHECK(absl::StrContains(exported.err, absl::StrCat("export: ", kRows, " links written")));
  CHECK(ExportedUrls(ReadFile(f.Path("resume-out.csv"))).size() == kRows);
}

TEST_CASE("shortenctl import keeps within a key's rate limit: smaller calls, retry-after-ms",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  Outcome created = f.Run({"keys", "create", "--name=ctl-rated", "--scopes=shorten,stats",
                           "--rate=400", "--burst=300"});
  REQUIRE(created.exit_code == 0);
  const std::string key_file = f.Path("ctl-rated.key");
  std::filesystem::copy_file(f.stdout_path(), key_file);
  std::filesystem::permissions(
      key_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::string text = "long_url\n";
  for (int i = 0; i < 1200; ++i) absl::StrAppend(&text, "https://example.com/rated/", i, "\n");
  Outcome imported =
      f.RunWithoutKey({"--api_key_file=" + key_file, "import", Write(f, "rated.csv", text)});
  INFO(imported.output);
  REQUIRE(imported.exit_code == 0);
  CHECK(absl::StrContains(imported.err, "exceed the burst of 300"));
  CHECK(absl::StrContains(imported.err, "; sending 250 items per call from now on"));
  CHECK(absl::StrContains(imported.err, "RESOURCE_EXHAUSTED: rate limit of api key \"ctl-rated\""));
  CHECK(absl::StrContains(imported.err, "1200 rows: 1200 imported (1200 created, 0 there before)"));
}

TEST_CASE("shortenctl export of a label imports into another tenant, and --columns maps headers",
          "[services/shortenctl][pg][e2e]") {
  CtlServiceFixture& f = Shared();
  CreatedKey a = CreateKey(f, "ctl-export-a", "shorten,stats");
  CreatedKey b = CreateKey(f, "ctl-export-b", "shorten,stats");
  const std::string as_a = "--api_key_file=" + a.file;
  const std::string as_b = "--api_key_file=" + b.file;
  // A Shlink-style export: their names, their columns.
  const std::string shlink = Write(f, "shlink.csv",
                                   "Long URL,Short URL,Short code,Title,Tags,Visits\r\n"
                                   "https://example.com/exp/1,https://s.lnk/exp-one,exp-one,One,"
                                   "a|b,3\r\n"
                                   "https://example.com/exp/2,https://s.lnk/x9,x9,Two,,0\r\n"
                                   "https://example.com/exp/3,https://s.lnk/x8,x8,Three,,0\r\n");
  Outcome refused = f.RunWithoutKey({as_a, "import", shlink});
  CHECK(refused.exit_code == 2);
  CHECK(absl::StrContains(refused.err, "header: no long_url column"));
  Outcome mapped = f.RunWithoutKey({as_a, "import", shlink,
                                    "--columns=long url:long_url,short code:code,short url:-",
                                    "--ignore_columns", "--label=campaign=exp"});
  INFO(mapped.output);
  REQUIRE(mapped.exit_code == 0);
  CHECK(absl::StrContains(mapped.err, "ignoring 3 unknown column(s)"));
  CHECK(Row(f.RunWithoutKey({as_a, "get", "exp-one"}).out, "labels") == "campaign=exp");
  REQUIRE(f.RunWithoutKey({as_a, "shorten", "https://example.com/exp/other"}).exit_code == 0);

  Outcome exported =
      f.RunWithoutKey({as_a, "export", "--label=campaign=exp", "-o", f.Path("exp.csv")});
  INFO(exported.output);
  REQUIRE(exported.exit_code == 0);
  const std::string csv = ReadFile(f.Path("exp.csv"));
  CHECK(ExportedUrls(csv) == std::set<std::string>{"https://example.com/exp/1",
                                                   "https://example.com/exp/2",
                                                   "https://example.com/exp/3"});
  CHECK(absl::StartsWith(csv,
                         "code,long_url,labels,expire_time,redirect_type,max_clicks,"
                         "short_url,state,create_time,click_count\r\n"));
  CHECK(absl::StrContains(csv,
                          "exp-one,https://example.com/exp/1,campaign=exp,,302,,"
                          "https://sho.rt/exp-one,ACTIVE,"));

  // Tenant b takes the export as it is: the aliases are a's (taken), so
  // they get new codes; labels and targets come along.
  Outcome taken = f.RunWithoutKey({as_b, "import", f.Path("exp.csv")});
  CHECK(taken.exit_code == 1);
  CHECK(absl::StrContains(taken.err, "3 rejected"));
  Outcome imported = f.RunWithoutKey({as_b, "import", f.Path("exp.csv"), "--codes=keep_or_new"});
  INFO(imported.output);
  REQUIRE(imported.exit_code == 0);
  CHECK(absl::StrContains(imported.err, "3 imported (3 created, 0 there before)"));
  CHECK(absl::StrContains(imported.err, "3 with new codes"));
  Outcome of_b = f.RunWithoutKey({as_b, "export", "--label=campaign=exp"});
  REQUIRE(of_b.exit_code == 0);
  CHECK(ExportedUrls(of_b.out) == ExportedUrls(csv));
  CHECK_FALSE(absl::StrContains(of_b.out, "exp-one,"));
}

}  // namespace
}  // namespace shortener::testing
