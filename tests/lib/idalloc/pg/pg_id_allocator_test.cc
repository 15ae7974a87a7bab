// SegmentIdAllocator over a real Postgres: threads, processes, and a database
// that goes away and comes back.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/idalloc/pg/pg_segment_source.h"
#include "lib/idalloc/segment_id_allocator.h"
#include "tests/lib/idalloc/outage_util.h"
#include "tests/lib/idalloc/pg/pg_test_util.h"
#include "tests/support/pg_cluster.h"
#include "tests/support/status_matchers.h"
#include "tests/support/subprocess.h"

namespace shortener::idalloc {
namespace {

using shortener::testing::BinaryPath;
using shortener::testing::HasCodeAndMessage;
using shortener::testing::IsOk;
using shortener::testing::PgCluster;
using shortener::testing::SharedPgCluster;
using shortener::testing::Subprocess;

void CheckAllUnique(std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
}

// Complete lines of a worker's output (a SIGKILL may cut the last one).
std::vector<int64_t> ReadIds(const std::string& path) {
  std::ifstream in(path);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<int64_t> ids;
  size_t start = 0;
  for (size_t nl = all.find('\n'); nl != std::string::npos; nl = all.find('\n', start)) {
    ids.push_back(std::stoll(all.substr(start, nl - start)));
    start = nl + 1;
  }
  return ids;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

int64_t FileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

// A fresh directory under /tmp, removed with everything in it when the test
// ends, however it ends (a failed REQUIRE throws through here).
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    std::string pattern = "/tmp/" + prefix + "-XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST_CASE("many threads draw unique ids from one allocator on Postgres",
          "[lib/idalloc/pg][concurrent][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  REQUIRE_THAT(testing::CreateSequence(conninfo, "threads"), IsOk());
  PgSegmentSource source(conninfo);
  IdAllocatorOptions options;
  options.sequence = "threads";
  options.initial_step = options.min_step = 100;
  options.max_step = 1000;
  SegmentIdAllocator allocator(&source, options);

  constexpr int kThreads = 8;
  constexpr int kPerThread = 50000;
  std::vector<std::vector<int64_t>> drawn(kThreads);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const absl::Time deadline = absl::Now() + absl::Seconds(15);
      for (int i = 0; i < kPerThread; ++i) {
        absl::StatusOr<int64_t> id = allocator.Next(deadline);
        if (!id.ok()) {
          failures.fetch_add(1);
          return;
        }
        drawn[t].push_back(*id);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(failures.load() == 0);
  std::vector<int64_t> all;
  for (const auto& ids : drawn) all.insert(all.end(), ids.begin(), ids.end());
  CHECK(all.size() == kThreads * kPerThread);
  CheckAllUnique(all);
  absl::StatusOr<int64_t> next_id = testing::NextIdInDatabase(conninfo, "threads");
  REQUIRE_THAT(next_id, IsOk());
  CHECK(*std::max_element(all.begin(), all.end()) < *next_id);
  CHECK(allocator.GetStats().current_step == 1000);
}

TEST_CASE("three processes on one database never issue the same id, one killed and restarted",
          "[lib/idalloc/pg][concurrent][pg]") {
  const std::string conninfo = SharedPgCluster().ConnInfo();
  REQUIRE_THAT(testing::CreateSequence(conninfo, "processes"), IsOk());
  const TempDir temp_dir("idalloc-workers");
  const std::string& dir = temp_dir.path();
  auto spawn = [&](const std::string& name, int64_t count) {
    absl::StatusOr<Subprocess> p = Subprocess::Spawn(
        {BinaryPath("idalloc_worker"), "--conninfo=" + conninfo, "--sequence=processes",
         "--step=100", absl::StrCat("--count=", count), absl::StrCat("--out=", dir, "/", name)},
        absl::StrCat(dir, "/", name, ".log"));
    REQUIRE_THAT(p, IsOk());
    return std::move(*p);
  };
  constexpr int64_t kCount = 30000;
  std::vector<Subprocess> workers;
  workers.push_back(spawn("ids.1", kCount));
  workers.push_back(spawn("ids.2", kCount));
  Subprocess victim = spawn("ids.3", 100 * kCount);  // killed long before it is done

  // Kill it mid-run: once it has written a few thousand ids.
  const absl::Time give_up = absl::Now() + absl::Seconds(15);
  while (FileSize(dir + "/ids.3") < 30000 && victim.running() && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  REQUIRE(victim.Signal(SIGKILL));
  CHECK(victim.Wait(absl::Seconds(5)) == 128 + SIGKILL);
  workers.push_back(spawn("ids.3.restarted", kCount));

  for (Subprocess& w : workers) {
    std::optional<int> code = w.Wait(absl::Seconds(20));
    CHECK(code == std::optional<int>(0));
  }
  std::vector<int64_t> all;
  for (const char* name : {"ids.1", "ids.2", "ids.3", "ids.3.restarted"}) {
    std::vector<int64_t> ids = ReadIds(dir + "/" + name);
    INFO(name << " log: " << ReadFile(absl::StrCat(dir, "/", name, ".log")));
    if (std::string(name) == "ids.3") {
      CHECK(ids.size() >= 4000);
    } else {
      CHECK(ids.size() == kCount);
    }
    all.insert(all.end(), ids.begin(), ids.end());
  }
  CheckAllUnique(all);
}

TEST_CASE(
    "Next fails UNAVAILABLE while the database is stopped and works again after it "
    "resumes",
    "[lib/idalloc/pg][pg]") {
  absl::StatusOr<std::unique_ptr<PgCluster>> cluster = PgCluster::Start();
  REQUIRE_THAT(cluster, IsOk());
  PgSegmentSource source((*cluster)->ConnInfo());
  IdAllocatorOptions options;
  options.initial_step = options.min_step = options.max_step = 100;
  SegmentIdAllocator allocator(&source, options);

  std::vector<int64_t> ids;
  for (int i = 0; i < 300; ++i) {
    absl::StatusOr<int64_t> id = allocator.Next(absl::Now() + absl::Seconds(5));
    REQUIRE_THAT(id, IsOk());
    ids.push_back(*id);
  }

  REQUIRE_THAT((*cluster)->Stop(), IsOk());
  // The current and the prefetched segments serve a few hundred more ids.
  const int64_t most = 100 * (1 + options.max_prefetched_segments);
  const OutageDraw draw = DrawUntilFailure(allocator, most, absl::Milliseconds(500), ids);
  const absl::Status& failure = draw.failure;
  const absl::Duration failed_after = draw.failed_after;
  const int64_t served = draw.served;
  CHECK(served <= most);
  CHECK_THAT(failure, HasCodeAndMessage(absl::StatusCode::kUnavailable,
                                        "no id segment available before the deadline"));
  // Bounded, not tight: the deadline plus slack for a loaded machine.
  CHECK(failed_after < absl::Milliseconds(500) + absl::Milliseconds(1500));

  REQUIRE_THAT((*cluster)->Resume(), IsOk());
  const int64_t before_max = *std::max_element(ids.begin(), ids.end());
  for (int i = 0; i < 300; ++i) {
    absl::StatusOr<int64_t> id = allocator.Next(absl::Now() + absl::Seconds(10));
    REQUIRE_THAT(id, IsOk());
    if (i == 0) CHECK(*id > before_max);
    ids.push_back(*id);
  }
  CheckAllUnique(ids);
}

}  // namespace
}  // namespace shortener::idalloc
