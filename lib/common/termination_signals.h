// SIGTERM/SIGINT/SIGHUP handling shared by our daemons: block the signals in
// every thread (call before starting any), then wait for one synchronously in
// the thread that owns shutdown. No async-signal-safety puzzles, no handler:
// whatever SIGHUP triggers runs as ordinary code on the waiting thread.
//
// Thread safety: BlockTerminationSignals affects the calling thread (and the
// threads it creates afterwards); call WaitForTermination from one thread.
#ifndef SHORTENER_LIB_COMMON_TERMINATION_SIGNALS_H_
#define SHORTENER_LIB_COMMON_TERMINATION_SIGNALS_H_

#include <functional>

#include "absl/time/time.h"

namespace shortener {

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread and so in every
// thread it creates afterwards.
void BlockTerminationSignals();

// Waits for SIGTERM or SIGINT (blocked by BlockTerminationSignals) and
// returns its number. Each SIGHUP received meanwhile runs `on_hangup` (if
// set; otherwise SIGHUP is consumed and ignored) on the calling thread before
// waiting again. A SIGTERM that arrives while `on_hangup` runs is not lost:
// it is taken once `on_hangup` returns, so `on_hangup` should not block for
// long. SIGHUPs sent while one is pending or being handled may merge into
// one (standard signals do not queue).
int WaitForTermination(const std::function<void()>& on_hangup = {});

// As WaitForTermination, for at most `timeout`: true when SIGTERM or SIGINT
// came within it (a second one, during a shutdown delay), false when the
// time ran out. SIGHUPs are consumed and ignored.
bool WaitForTerminationFor(absl::Duration timeout);

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_TERMINATION_SIGNALS_H_
