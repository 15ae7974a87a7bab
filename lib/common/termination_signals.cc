#include "lib/common/termination_signals.h"

#include <pthread.h>
#include <signal.h>

#include "absl/time/clock.h"

namespace shortener {
namespace {

sigset_t TerminationSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

void BlockTerminationSignals() {
  const sigset_t set = TerminationSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForTermination(const std::function<void()>& on_hangup) {
  const sigset_t set = TerminationSet();
  while (true) {
    int signo = 0;
    if (sigwait(&set, &signo) != 0) continue;
    if (signo != SIGHUP) return signo;
    if (on_hangup) on_hangup();
  }
}

bool WaitForTerminationFor(absl::Duration timeout) {
  const sigset_t set = TerminationSet();
  const absl::Time end = absl::Now() + timeout;
  while (true) {
    const absl::Duration left = end - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    const timespec wait = absl::ToTimespec(left);
    const int signo = sigtimedwait(&set, nullptr, &wait);
    if (signo == SIGTERM || signo == SIGINT) return true;
    // SIGHUP, EINTR or EAGAIN (the time ran out: checked at the top).
  }
}

}  // namespace shortener
