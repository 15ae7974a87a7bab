// The commands of shortenctl (shorten, batch, resolve, get, revoke): check
// the arguments, make the RPCs through ShortenClient, print the results, and
// map the outcome to an exit code. main.cc only parses flags into Options.
// Not thread-safe: one Run at a time (it reads and writes the given streams).
#ifndef SHORTENER_SERVICES_SHORTENCTL_COMMANDS_H_
#define SHORTENER_SERVICES_SHORTENCTL_COMMANDS_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/grpcutil/tls.h"
#include "services/shortenctl/args.h"

namespace shortener::ctl {

// Exit status of shortenctl.
enum ExitCode : int {
  kExitOk = 0,
  kExitServiceError = 1,  // an RPC failed, or the service could not be reached
  kExitUsage = 2,         // unknown command, missing argument, bad flag value
};

struct Options {
  std::string service = "127.0.0.1:50051";    // --service: HOST:PORT of shorten-service
  grpcutil::ClientTlsOptions tls;             // --service_tls_*: none set: plaintext
  bool json = false;                          // --json: one JSON object per line
  absl::Duration timeout = absl::Seconds(5);  // --timeout: connect, and each call
  ShortenFlags shorten;                       // flags of shorten and batch
};

// Where a command reads (batch -) and writes.
struct Console {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
};

// Runs `args` = {command, arguments...}. Results go to out; errors to err as
// "shortenctl: CODE_NAME: message" (plus a hint for UNAVAILABLE), usage
// errors as "shortenctl: message" plus a usage line. Returns the exit code.
int Run(const Options& options, const std::vector<std::string>& args, Console io);

// Prints "shortenctl: <message>" and `usage_line` to `err`; returns kExitUsage.
int ReportUsageError(absl::string_view message, absl::string_view usage_line, std::ostream& err);

// Prints "shortenctl: CODE_NAME: message" to `err`, and for UNAVAILABLE a
// hint naming `service`; returns kExitServiceError.
int ReportServiceError(const absl::Status& status, absl::string_view service, std::ostream& err);

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_COMMANDS_H_
