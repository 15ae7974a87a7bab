// shorten_bench stopped by SIGTERM or SIGINT: it stops the PostgreSQL
// cluster and the shorten-service it started, deletes their temp dirs and
// exits with 128 + the signal (tests/bench/common/bench_util.h,
// StopChildrenOnSignals). Runs the real benchmark binary of this build tree.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "tests/support/orphan_reaper.h"
#include "tests/support/subprocess.h"

namespace shortener::testing {
namespace {

// Alive and not a zombie (an exited child nobody has reaped yet, which
// kill(pid, 0) still finds).
bool Running(int pid) {
  if (pid <= 0) return false;
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// What a benchmark run has started, found through the temp dirs it owns.
struct Started {
  std::string pg_dir, service_dir;
  int postmaster = 0, service = 0;
};

// The /tmp dirs named `prefix`* whose owner.pid is `owner`.
std::vector<std::string> OwnedDirs(const std::string& prefix, int owner) {
  std::vector<std::string> dirs;
  DIR* tmp = ::opendir("/tmp");
  if (tmp == nullptr) return dirs;
  while (struct dirent* entry = ::readdir(tmp)) {
    const std::string name = entry->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string dir = "/tmp/" + name;
    if (ReadPidFile(dir + "/owner.pid") == owner) dirs.push_back(dir);
  }
  ::closedir(tmp);
  return dirs;
}

// The running cluster and service of the benchmark process `owner`, once
// both are up.
std::optional<Started> FindStarted(int owner) {
  Started found;
  for (const std::string& dir : OwnedDirs("shortener-pg-", owner)) {
    const int pid = ReadPidFile(dir + "/data/postmaster.pid");
    if (Running(pid)) found.pg_dir = dir, found.postmaster = pid;
  }
  for (const std::string& dir : OwnedDirs("shortener-svc-", owner)) {
    const int pid = ReadPidFile(dir + "/child.pid");
    if (Running(pid)) found.service_dir = dir, found.service = pid;
  }
  if (found.postmaster == 0 || found.service == 0) return std::nullopt;
  return found;
}

void StopsEverything(int signo) {
  absl::StatusOr<std::string> dir = MakeOwnedTempDir("shortener-benchsig-");
  REQUIRE(dir.ok());
  const std::string log = *dir + "/bench.log";
  // A long Shorten-only load without pgbench: the signal comes while it runs.
  absl::StatusOr<Subprocess> bench = Subprocess::Spawn(
      {BinaryPath("shorten_bench"), "--rounds=1", "--seconds=60", "--warmup_seconds=1",
       "--batch_inflight=", "--skip_pgbench", "--preallocate_wal_segments=0"},
      log);
  REQUIRE(bench.ok());
  std::optional<Started> started;
  const absl::Time give_up = absl::Now() + absl::Seconds(120);
  while (!(started = FindStarted(bench->pid())) && absl::Now() < give_up && bench->running()) {
    absl::SleepFor(absl::Milliseconds(100));
  }
  INFO("benchmark log:\n" << ReadTextFile(log));
  REQUIRE(started.has_value());

  REQUIRE(bench->Signal(signo));
  std::optional<int> code = bench->Wait(absl::Seconds(60));
  REQUIRE(code.has_value());
  CHECK(*code == 128 + signo);
  CHECK_THAT(ReadTextFile(log), Catch::Contains("stopping the clusters and services it started"));
  CHECK_FALSE(Running(started->service));
  CHECK_FALSE(Running(started->postmaster));
  CHECK_FALSE(Exists(started->pg_dir));
  CHECK_FALSE(Exists(started->service_dir));
  std::system(absl::StrCat("rm -rf '", *dir, "'").c_str());
}

TEST_CASE("shorten_bench stopped by SIGTERM stops its cluster and service and removes their dirs",
          "[bench/shorten][pg]") {
  StopsEverything(SIGTERM);
}

TEST_CASE("shorten_bench stopped by SIGINT stops its cluster and service and removes their dirs",
          "[bench/shorten][pg]") {
  StopsEverything(SIGINT);
}

}  // namespace
}  // namespace shortener::testing
