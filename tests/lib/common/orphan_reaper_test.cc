// The test-support reaper: what a dead test left running is stopped and its
// dir removed; what a live test owns is left alone.
#include "tests/support/orphan_reaper.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "absl/time/time.h"
#include "tests/support/subprocess.h"

namespace shortener::testing {
namespace {

int DeadPid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, nullptr, 0);
  return pid;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TEST_CASE("ReapOrphans stops the child of a dead owner and keeps a live owner's dir",
          "[lib/common][concurrent]") {
  char dead_templ[] = "/tmp/shortener-reaptest-XXXXXX";
  char live_templ[] = "/tmp/shortener-reaptest-XXXXXX";
  REQUIRE(mkdtemp(dead_templ) != nullptr);
  REQUIRE(mkdtemp(live_templ) != nullptr);
  std::string dead_dir = dead_templ, live_dir = live_templ;

  auto orphan = Subprocess::Spawn({"/bin/sleep", "60"});
  REQUIRE(orphan.ok());
  {
    // The owner file is written as if by a test process that has died.
    FILE* f = fopen((dead_dir + "/owner.pid").c_str(), "w");
    REQUIRE(f != nullptr);
    fprintf(f, "%d\n", DeadPid());
    fclose(f);
  }
  RecordChild(dead_dir, orphan->pid());
  RecordOwner(live_dir);

  ReapOrphans("shortener-reaptest-");
  CHECK(orphan->Wait(absl::Seconds(5)).has_value());
  CHECK_FALSE(Exists(dead_dir));
  CHECK(Exists(live_dir));
  std::string cleanup = "rm -rf " + live_dir;
  CHECK(system(cleanup.c_str()) == 0);
}

}  // namespace
}  // namespace shortener::testing
