// WaitForTermination: SIGHUP runs the daemon's hook (or is ignored) and the
// wait goes on; SIGTERM/SIGINT end it. Signals are sent to this thread only
// (pthread_kill), so that another thread of the test process can never take
// them, and the signal mask is restored afterwards.
#include "lib/common/termination_signals.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace shortener {
namespace {

// Blocks the termination signals for the life of the object, then puts the
// thread's mask back.
class BlockedSignals {
 public:
  BlockedSignals() {
    pthread_sigmask(SIG_SETMASK, nullptr, &old_);
    BlockTerminationSignals();
  }
  ~BlockedSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

TEST_CASE("SIGHUP without a hook is ignored and SIGINT ends the wait", "[lib/common][concurrent]") {
  BlockedSignals blocked;
  REQUIRE(pthread_kill(pthread_self(), SIGHUP) == 0);
  REQUIRE(pthread_kill(pthread_self(), SIGINT) == 0);
  CHECK(WaitForTermination() == SIGINT);
}

TEST_CASE("a pending SIGHUP runs the hook before a pending SIGTERM ends the wait",
          "[lib/common][concurrent]") {
  BlockedSignals blocked;
  int hangups = 0;
  REQUIRE(pthread_kill(pthread_self(), SIGHUP) == 0);
  REQUIRE(pthread_kill(pthread_self(), SIGTERM) == 0);
  CHECK(WaitForTermination([&hangups] { ++hangups; }) == SIGTERM);
  CHECK(hangups == 1);
}

TEST_CASE("every SIGHUP sent while waiting runs the hook on the waiting thread",
          "[lib/common][concurrent]") {
  BlockedSignals blocked;
  const pthread_t waiter = pthread_self();
  std::atomic<int> hangups{0};
  std::atomic<bool> hook_on_waiter{true};
  std::atomic<bool> sent_all{false};
  // One SIGHUP at a time, each after the previous one was handled, so that
  // none merge; then SIGTERM.
  std::thread sender([&] {
    for (int i = 0; i < 3; ++i) {
      pthread_kill(waiter, SIGHUP);
      const absl::Time give_up = absl::Now() + absl::Seconds(10);
      while (hangups.load() <= i && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(1));
    }
    sent_all = true;
    pthread_kill(waiter, SIGTERM);
  });
  const int signo = WaitForTermination([&] {
    if (!pthread_equal(pthread_self(), waiter)) hook_on_waiter = false;
    hangups.fetch_add(1);
  });
  sender.join();
  CHECK(signo == SIGTERM);
  CHECK(sent_all.load());
  CHECK(hangups.load() == 3);
  CHECK(hook_on_waiter.load());
}

TEST_CASE("WaitForTerminationFor ends at its timeout, or at once on a pending SIGTERM, not SIGHUP",
          "[lib/common][concurrent]") {
  BlockedSignals blocked;
  REQUIRE(pthread_kill(pthread_self(), SIGHUP) == 0);
  const absl::Time start = absl::Now();
  CHECK_FALSE(WaitForTerminationFor(absl::Milliseconds(200)));
  CHECK(absl::Now() - start >= absl::Milliseconds(200));
  REQUIRE(pthread_kill(pthread_self(), SIGTERM) == 0);
  CHECK(WaitForTerminationFor(absl::Seconds(30)));
  CHECK_FALSE(WaitForTerminationFor(absl::ZeroDuration()));
}

}  // namespace
}  // namespace shortener
