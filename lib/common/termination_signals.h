// SIGTERM/SIGINT handling shared by our daemons: block the signals in every
// thread (call before starting any), then wait for one synchronously in the
// thread that owns shutdown. No async-signal-safety puzzles, no handler.
#ifndef SHORTENER_LIB_COMMON_TERMINATION_SIGNALS_H_
#define SHORTENER_LIB_COMMON_TERMINATION_SIGNALS_H_

namespace shortener {

// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread and so in every
// thread it creates afterwards.
void BlockTerminationSignals();

// Waits for SIGTERM or SIGINT (blocked by BlockTerminationSignals) and
// returns its number. SIGHUP is consumed and ignored (nothing reloads yet).
int WaitForTermination();

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_TERMINATION_SIGNALS_H_
