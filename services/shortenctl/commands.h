// The commands of shortenctl (shorten, batch, resolve, get, revoke, stats and
// keys create|list|revoke): check the arguments, make the RPCs through
// ShortenClient with the API key, print the results, and map the outcome to
// an exit code. main.cc only parses flags (and the environment) into Options.
// Not thread-safe: one Run at a time (it reads and writes the given streams).
#ifndef SHORTENER_SERVICES_SHORTENCTL_COMMANDS_H_
#define SHORTENER_SERVICES_SHORTENCTL_COMMANDS_H_

#include <iosfwd>
#include <set>
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
  kExitServiceError = 1,  // an RPC failed, the service could not be reached, or an output
                          // file (stats --csv_top) could not be written
  kExitUsage = 2,         // unknown command, missing argument, bad flag value
};

struct Options {
  std::string service = "127.0.0.1:50051";    // --service: HOST:PORT of shorten-service
  grpcutil::ClientTlsOptions tls;             // --service_tls_*: none set: plaintext
  bool json = false;                          // --json: one JSON object per line
  absl::Duration timeout = absl::Seconds(5);  // --timeout: connect, and each call
  // The API key sent with every call; main.cc sets it from
  // $SHORTENER_API_KEY. Empty: none (the service answers UNAUTHENTICATED).
  std::string api_key;
  // --api_key_file: when set, Run reads the key from this file instead of
  // taking api_key (a bad file is a usage error). Default none.
  std::string api_key_file;
  ShortenFlags shorten;  // flags of shorten and batch
  KeyFlags keys;         // flags of keys create
  StatsFlags stats;      // flags of stats
  QrFlags qr;            // flags of qr
  ListFlags list;        // flags of list
  UpdateFlags update;    // flags of update (and get --history)
  // Flags of import and export.
  TransferFlags transfer;
  // The flags the command line set, by name (a flag set to its default
  // still counts: update --max_clicks=0 removes a budget).
  std::set<std::string> flags_given;
  // --label, every one given, comma-joined ("k=v,k2=v2"; ParseLabelFlags):
  // labels of the links shorten and batch make, or stats' label.
  std::string labels;
};

// Where a command reads (batch -) and writes.
struct Console {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
};

// Runs `args` = {command, arguments...}. Results go to out; errors to err as
// "shortenctl: CODE_NAME: message" (plus a hint for UNAVAILABLE and
// UNAUTHENTICATED), usage errors as "shortenctl: message" plus a usage line.
// `keys create` writes the key alone to out and a note about it to err (with
// --json: the whole response to out, no note).
// Returns the exit code.
int Run(const Options& options, const std::vector<std::string>& args, Console io);

// Prints "shortenctl: <message>" and `usage_line` to `err`; returns kExitUsage.
int ReportUsageError(absl::string_view message, absl::string_view usage_line, std::ostream& err);

// Prints "shortenctl: CODE_NAME: message" to `err`, and a hint: for
// UNAVAILABLE one naming `service`, for UNAUTHENTICATED how to pass an API
// key. Returns kExitServiceError.
int ReportServiceError(const absl::Status& status, absl::string_view service, std::ostream& err);

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_COMMANDS_H_
