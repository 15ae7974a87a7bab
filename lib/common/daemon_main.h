// The start and end every daemon's main() shares (shorten-service,
// redirect-edge), so that a main.cc reads: flags -> config -> run.
//
//   int main(int argc, char** argv) {
//     StartDaemon(argc, argv, kInfo);
//     return DaemonExitCode(kInfo, Run(ConfigFromFlags()));
//   }
//
// Thread safety: StartDaemon must run first thing in main(), before any
// thread starts (it changes process-wide settings and the signal mask every
// later thread inherits).
#ifndef SHORTENER_LIB_COMMON_DAEMON_MAIN_H_
#define SHORTENER_LIB_COMMON_DAEMON_MAIN_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace shortener {

struct DaemonInfo {
  // The program's name, prefixed to a failure ("redirect-edge: ...").
  absl::string_view name;
  // What --help says the program is.
  absl::string_view usage;
  // The source file (path suffix) that defines the program's flags: --help
  // lists those (Abseil matches flag files to the program name by default,
  // which our file names never match).
  absl::string_view flags_file;
};

// Turns off Abseil's mutex deadlock detector (abseil_runtime.h), sets the
// usage text, parses the command line (a bad flag exits non-zero with one
// line naming it, as Abseil does), and blocks SIGTERM, SIGINT and SIGHUP so
// that the daemon's own signal thread takes them (termination_signals.h).
void StartDaemon(int argc, char** argv, const DaemonInfo& info);

// 0 for OK; otherwise prints "<name>: <status>" on stderr and returns 1.
int DaemonExitCode(const DaemonInfo& info, const absl::Status& status);

}  // namespace shortener

#endif  // SHORTENER_LIB_COMMON_DAEMON_MAIN_H_
