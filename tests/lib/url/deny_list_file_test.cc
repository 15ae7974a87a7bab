// The deny list file: parsing (comments, blank lines, CRLF, bad entries named
// by line), reading, and the watcher's reload rules (a change on disk, a
// rename over the file, a deleted or malformed file keeping the old list).
// Watcher tests use short poll intervals and bounded waits; what the
// watcher's thread hands over is copied under a mutex and checked here, on
// the test thread only.
#include "lib/url/deny_list_file.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/support/status_matchers.h"

namespace shortener::url {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;
using Domains = std::vector<std::string>;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

// A private directory, removed with its files at the end of the test.
class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/shortener-denylist-XXXXXX";
    REQUIRE(mkdtemp(templ) != nullptr);
    path_ = templ;
  }
  ~TempDir() { std::system(absl::StrCat("rm -rf '", path_, "'").c_str()); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Rewrites `path` in place (same inode).
void WriteInPlace(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  REQUIRE(out.good());
}

// Replaces `path` the way deploy tools do: a new file renamed over it.
void ReplaceByRename(const std::string& path, const std::string& text) {
  const std::string temp = path + ".new";
  WriteInPlace(temp, text);
  REQUIRE(std::rename(temp.c_str(), path.c_str()) == 0);
}

// Collects what the watcher applies (from its thread or ours).
class Applied {
 public:
  DenyListWatcher::Apply Callback() {
    return [this](const Domains& domains) {
      std::lock_guard<std::mutex> lock(mu_);
      last_ = domains;
      ++calls_;
    };
  }
  Domains last() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_;
  }
  int calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  // Waits (at most `timeout`) until the list applied is `expected`.
  bool WaitFor(const Domains& expected, absl::Duration timeout = absl::Seconds(10)) const {
    const absl::Time give_up = absl::Now() + timeout;
    while (absl::Now() < give_up) {
      if (last() == expected) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return last() == expected;
  }

 private:
  mutable std::mutex mu_;
  Domains last_;
  int calls_ = 0;
};

DenyListWatcherOptions Options(const std::string& path, absl::Duration poll) {
  DenyListWatcherOptions options;
  options.path = path;
  options.poll_interval = poll;
  return options;
}

TEST_CASE("a deny list ignores comments and blank lines and accepts CRLF", "[lib/url]") {
  const std::string text =
      "\xEF\xBB\xBF# phishing reported 2024-05-01\r\n"
      "evil.example\r\n"
      "\r\n"
      "   \t\n"
      "  Tracker.Example.   # trailing dot and case\n"
      "#commented.example\n"
      ".leading-dot.example\n"
      "bücher-böse.de\n"
      "::2\n"
      "10.0.0.1\n"
      "evil.example\n"  // a duplicate counts once
      "last.example";   // no newline at the end
  const absl::StatusOr<Domains> domains = ParseDenyList(text);
  REQUIRE_THAT(domains, IsOk());
  CHECK(*domains == Domains{"evil.example", "tracker.example", "leading-dot.example",
                            "xn--bcher-bse-67a3d.de", "[::2]", "10.0.0.1", "last.example"});
}

TEST_CASE("an empty or comment-only deny list is an empty list", "[lib/url]") {
  CHECK(ParseDenyList("").value().empty());
  CHECK(ParseDenyList("# nothing yet\n\n").value().empty());
}

TEST_CASE("a bad deny list entry is refused naming its line and the problem", "[lib/url]") {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"ok.example\nhttps://evil.example/\n",
       R"(line 2: "https://evil.example/" is not a domain name (write the host alone, not a URL))"},
      {"# header\r\n\r\n*.evil.example\r\n",
       R"(line 3: "*.evil.example" is not a domain name (no wildcards)"},
      {"a.example b.example\n",
       R"(line 1: one domain per line, got 2 words ("a.example b.example"))"},
      {"a.example\tb.example\n", "line 1: one domain per line, got 2 words"},
      {"ok.example\n\nevil..example\n",
       R"(line 3: "evil..example" is not a domain name or IP address)"},
      {"ok.example\nbad_chär!.example\n", "line 2: "},
      {"1.2.3\n", R"(line 1: "1.2.3" is not a domain name or IP address)"},
      {".\n", R"(line 1: "." is not a domain name)"},
      {"evil.example\x01\n", "line 1: "},
      {std::string(300, 'a') + ".example\n", "line 1: "},
  };
  for (const Case& c : cases) {
    INFO("text: " << c.text);
    CHECK_THAT(ParseDenyList(c.text), HasCodeAndMessage(kInvalid, c.message));
  }
  CHECK_THAT(ParseDenyList("ok.example\n*.bad\n", "/etc/deny.txt"),
             HasCodeAndMessage(kInvalid, "/etc/deny.txt:2: \"*.bad\""));
}

TEST_CASE("reading a deny list file names the file in every error", "[lib/url]") {
  TempDir dir;
  const std::string path = dir.File("deny.txt");
  CHECK_THAT(ReadDenyListFile(path),
             HasCodeAndMessage(absl::StatusCode::kNotFound, path + ": No such file"));
  WriteInPlace(path, "good.example\n\nhttp://bad.example\n");
  CHECK_THAT(ReadDenyListFile(path), HasCodeAndMessage(kInvalid, path + ":3: "));
  WriteInPlace(path, "good.example\n");
  CHECK(ReadDenyListFile(path).value() == Domains{"good.example"});
  CHECK_THAT(ReadDenyListFile(dir.File("")),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition, "Is a directory"));
  const std::string fifo = dir.File("fifo");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(ReadDenyListFile(fifo),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition, "not a regular file"));
}

TEST_CASE("a deny list watcher does not start on a missing or malformed file", "[lib/url]") {
  TempDir dir;
  const std::string path = dir.File("deny.txt");
  Applied applied;
  CHECK_THAT(DenyListWatcher::Start(Options(path, absl::Seconds(1)), applied.Callback()),
             HasCodeAndMessage(absl::StatusCode::kNotFound, path));
  WriteInPlace(path, "a.example\nnot a domain\n");
  CHECK_THAT(DenyListWatcher::Start(Options(path, absl::Seconds(1)), applied.Callback()),
             HasCodeAndMessage(kInvalid, path + ":2: one domain per line"));
  CHECK_THAT(DenyListWatcher::Start(Options("", absl::Seconds(1)), applied.Callback()),
             HasCode(kInvalid));
  CHECK_THAT(DenyListWatcher::Start(Options(path, absl::ZeroDuration()), applied.Callback()),
             HasCode(kInvalid));
  CHECK(applied.calls() == 0);
}

TEST_CASE("a deny list watcher applies the file merged with the fixed domains at start",
          "[lib/url][concurrent]") {
  TempDir dir;
  const std::string path = dir.File("deny.txt");
  WriteInPlace(path, "evil.example\nfile.example\n");
  Applied applied;
  DenyListWatcherOptions options = Options(path, absl::Hours(1));
  options.fixed_domains = {"Fixed.Example", "evil.example."};
  auto watcher = DenyListWatcher::Start(options, applied.Callback());
  REQUIRE_THAT(watcher, IsOk());
  CHECK(applied.calls() == 1);
  CHECK(applied.last() == Domains{"fixed.example", "evil.example", "file.example"});
  CHECK((*watcher)->DomainCount() == 3);
}

TEST_CASE("a deny list watcher notices a file rewritten in place", "[lib/url][concurrent]") {
  TempDir dir;
  const std::string path = dir.File("deny.txt");
  WriteInPlace(path, "a.example\n");
  Applied applied;
  auto watcher = DenyListWatcher::Start(Options(path, absl::Milliseconds(10)), applied.Callback());
  REQUIRE_THAT(watcher, IsOk());
  WriteInPlace(path, "a.example\nb.example\n");
  CHECK(applied.WaitFor({"a.example", "b.example"}));
  WriteInPlace(path, "c.example\n");
  CHECK(applied.WaitFor({"c.example"}));
  CHECK((*watcher)->DomainCount() == 1);
}

TEST_CASE("a deny list watcher notices a file replaced by rename", "[lib/url][concurrent]") {
  TempDir dir;
  const std::string path = dir.File("deny.txt");
  WriteInPlace(path, "a.example\n");
  Applied applied;
  auto watcher = DenyListWatcher::Start(Options(path, absl::Milliseconds(10)), applied.Callback());
  REQUIRE_THAT(watcher, IsOk());
  // Same size as before: only the inode tells the versions apart.
  ReplaceByRename(path, "b.example\n");
  CHECK(applied.WaitFor({"b.example"}));
  ReplaceByRename(path, "b.example\nc.example\n");
  CHECK(applied.WaitFor({"b.example", "c.example"}));
}

TEST_CASE("a deleted deny list file keeps the previous list until it is back",
          "[lib/url][concurrent]") {
  TempDir dir;
  const std::string path = dir.File("deny.txt");
  WriteInPlace(path, "a.example\n");
  Applied applied;
  auto watcher = DenyListWatcher::Start(Options(path, absl::Milliseconds(10)), applied.Callback());
  REQUIRE_THAT(watcher, IsOk());
  REQUIRE(unlink(path.c_str()) == 0);
  absl::SleepFor(absl::Milliseconds(200));  // some twenty polls
  CHECK_THAT((*watcher)->Reload("test"), HasCodeAndMessage(absl::StatusCode::kNotFound, path));
  CHECK(applied.calls() == 1);
  CHECK(applied.last() == Domains{"a.example"});
  CHECK((*watcher)->DomainCount() == 1);
  WriteInPlace(path, "b.example\n");
  CHECK(applied.WaitFor({"b.example"}));
}

TEST_CASE("a malformed deny list file keeps the previous list until it is fixed",
          "[lib/url][concurrent]") {
  TempDir dir;
  const std::string path = dir.File("deny.txt");
  WriteInPlace(path, "a.example\n");
  Applied applied;
  auto watcher = DenyListWatcher::Start(Options(path, absl::Milliseconds(10)), applied.Callback());
  REQUIRE_THAT(watcher, IsOk());
  ReplaceByRename(path, "a.example\nb.example\nhttp://c.example/\n");
  absl::SleepFor(absl::Milliseconds(200));
  CHECK_THAT((*watcher)->Reload("test"), HasCodeAndMessage(kInvalid, path + ":3: "));
  CHECK(applied.calls() == 1);
  CHECK(applied.last() == Domains{"a.example"});
  ReplaceByRename(path, "a.example\nb.example\nc.example\n");
  CHECK(applied.WaitFor({"a.example", "b.example", "c.example"}));
}

TEST_CASE("Reload reads the file at once and an empty file never empties the list",
          "[lib/url][concurrent]") {
  TempDir dir;
  const std::string path = dir.File("deny.txt");
  WriteInPlace(path, "a.example\n");
  Applied applied;
  // The watcher's thread will not poll during the test: only Reload loads.
  auto watcher = DenyListWatcher::Start(Options(path, absl::Hours(1)), applied.Callback());
  REQUIRE_THAT(watcher, IsOk());
  WriteInPlace(path, "b.example\n");
  REQUIRE_THAT((*watcher)->Reload("test"), IsOk());
  CHECK(applied.last() == Domains{"b.example"});
  // 0 bytes: a truncation caught before the rewrite, not an empty list.
  WriteInPlace(path, "");
  CHECK_THAT((*watcher)->Reload("test"),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition, "is empty"));
  CHECK(applied.last() == Domains{"b.example"});
  // Emptying the list on purpose: a file with a comment.
  WriteInPlace(path, "# nothing denied for now\n");
  REQUIRE_THAT((*watcher)->Reload("test"), IsOk());
  CHECK(applied.last().empty());
  CHECK((*watcher)->DomainCount() == 0);
}

}  // namespace
}  // namespace shortener::url
