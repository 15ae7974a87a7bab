// Subprocess::Freeze: when it returns true the child is stopped, not merely
// signalled; a child that has exited cannot be frozen.
#include "tests/support/subprocess.h"

#include <signal.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace shortener::testing {
namespace {

// The state letter of /proc/<pid>/stat, read here independently of Freeze.
char ProcessState(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? '?' : stat[close + 2];
}

TEST_CASE("Freeze returns once a busy child is stopped and SIGCONT resumes it", "[lib/common]") {
  auto child = Subprocess::Spawn({"/bin/sh", "-c", "while :; do :; done"});
  REQUIRE(child.ok());
  for (int i = 0; i < 20; ++i) {
    REQUIRE(child->Freeze());
    CHECK(ProcessState(child->pid()) == 'T');
    REQUIRE(child->Signal(SIGCONT));
  }
  CHECK(child->running());
}

TEST_CASE("Freeze of a child that has exited is false within its timeout", "[lib/common]") {
  auto child = Subprocess::Spawn({"/bin/true"});
  REQUIRE(child.ok());
  absl::SleepFor(absl::Milliseconds(200));  // exited, not yet reaped: a zombie
  CHECK_FALSE(child->Freeze(absl::Milliseconds(300)));
  CHECK(child->Wait(absl::Seconds(5)) == 0);
}

}  // namespace
}  // namespace shortener::testing
