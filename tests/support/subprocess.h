// Child processes for end-to-end and fault tests: spawn a binary with
// arguments, signal it by PID, wait with a timeout. The destructor kills
// (SIGKILL) and reaps a child that is still running, so a failing test never
// leaves a process behind.
#ifndef SHORTENER_TESTS_SUPPORT_SUBPROCESS_H_
#define SHORTENER_TESTS_SUPPORT_SUBPROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace shortener::testing {

class Subprocess {
 public:
  // Starts argv[0] (a path) with argv; stdout and stderr go to `log_path`
  // (appended) when not empty, else are inherited.
  static absl::StatusOr<Subprocess> Spawn(const std::vector<std::string>& argv,
                                          const std::string& log_path = "");
  Subprocess() = default;  // no process
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  ~Subprocess();

  pid_t pid() const { return pid_; }
  bool Signal(int signo) const;
  // SIGSTOP, then waits until every thread of the child is stopped; false
  // when that takes longer than `timeout`. kill() returns before the stop
  // takes effect: the kernel wakes one thread to take the signal, and until
  // it runs (on a busy machine, milliseconds later) the others go on running,
  // e.g. answering an RPC the test meant to hang.
  bool Freeze(absl::Duration timeout = absl::Seconds(10)) const;
  // Waits for exit; returns the exit code (or 128 + signal), nullopt on
  // timeout.
  std::optional<int> Wait(absl::Duration timeout);
  bool running();

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int PickUnusedPort();

// Path of a binary built into build/bin (next to the test binaries' own
// build tree), from the SHORTENER_BIN_DIR compile definition.
std::string BinaryPath(const std::string& name);

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_SUBPROCESS_H_
