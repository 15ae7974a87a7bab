// DisableMutexDeadlockDetection: with Debian's Abseil (built without NDEBUG)
// a lock-order inversion between two absl::Mutex aborts the process unless
// the detector is off. Each case runs in a forked child, so that the
// process-wide setting never leaks into other tests.
#include "lib/common/abseil_runtime.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>

#include "absl/synchronization/mutex.h"

namespace shortener {
namespace {

// Takes a then b, later b then a, in a child; returns its wait status.
int InvertLockOrderInChild(bool disable_detection) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDERR_FILENO);  // the detector's report
    if (disable_detection) common::DisableMutexDeadlockDetection();
    absl::Mutex a, b;
    a.Lock();
    b.Lock();
    b.Unlock();
    a.Unlock();
    b.Lock();
    a.Lock();
    a.Unlock();
    b.Unlock();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST_CASE("with the deadlock detector off a lock-order inversion does not abort",
          "[lib/common][concurrent]") {
  const int status = InvertLockOrderInChild(true);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("the system Abseil aborts on a lock-order inversion by default",
          "[lib/common][concurrent]") {
  // Why the binaries turn the detector off; if this ever fails, the
  // distribution builds Abseil with NDEBUG and the call has become moot.
  const int status = InvertLockOrderInChild(false);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
}

}  // namespace
}  // namespace shortener
