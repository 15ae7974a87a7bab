// Ctrl-C during import and export: the first SIGINT (or SIGTERM) asks the
// command to stop after the batch or page in hand, whose state it saves,
// so that the terminal is left clean and the message says where a new run
// goes on; a second one ends the process at once (the default action,
// restored by SA_RESETHAND). Either way the state files keep the run
// resumable.
// One InterruptWatch at a time (it installs process-wide handlers); its
// methods may be called from any thread.
#ifndef SHORTENER_SERVICES_SHORTENCTL_INTERRUPT_H_
#define SHORTENER_SERVICES_SHORTENCTL_INTERRUPT_H_

#include <signal.h>

namespace shortener::ctl {

// The exit status of a command stopped by a signal (128 + SIGINT).
inline constexpr int kExitInterrupted = 130;

class InterruptWatch {
 public:
  // Installs the handlers; the destructor puts the previous ones back.
  InterruptWatch();
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  // Whether SIGINT or SIGTERM came since construction.
  bool interrupted() const;

 private:
  struct sigaction old_int_;
  struct sigaction old_term_;
};

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_INTERRUPT_H_
