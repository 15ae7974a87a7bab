// Command-line parsing of shortenctl that needs no server: the scan of argv
// into flags and positional arguments, the values of --expire and --redirect,
// the ShortenRequest and CreateApiKeyRequest they build, the API key to send,
// and the usage and help texts.
// Stateless functions; ParseArgv sets absl flags, so call it from one thread.
#ifndef SHORTENER_SERVICES_SHORTENCTL_ARGS_H_
#define SHORTENER_SERVICES_SHORTENCTL_ARGS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "shortener/v1/shortener.pb.h"

namespace shortener::ctl {

// What `shorten` (and, but for alias and request_id, `batch`) asks for
// besides the URL. Empty strings mean "not given".
struct ShortenFlags {
  std::string alias;       // --alias: custom code; default a generated one
  std::string expire;      // --expire: RFC 3339 time or duration; default never
  std::string redirect;    // --redirect: 301|302|307|308; default 302
  bool force_new = false;  // --force_new: no de-duplication
  std::string request_id;  // --request_id: idempotency key; default none
  int64_t max_clicks = 0;  // --max_clicks: human click budget; 0 unlimited

  bool AnySet() const {
    return !alias.empty() || !expire.empty() || !redirect.empty() || force_new ||
           !request_id.empty() || max_clicks != 0;
  }
};

// What `keys create` asks for. Empty strings mean "not given".
struct KeyFlags {
  std::string name;             // --name: required, what the key is for
  std::string tenant;           // --tenant: owner of the key's links; default the name
                                // (also stats --label's tenant: RunStats reads it)
  std::string scopes;           // --scopes: comma-separated, at least one
  std::string domains;          // --domains: comma-separated target domains; default all
  std::string rate;             // --rate: requests per second; default no limit
  std::string burst;            // --burst: token bucket size; default ceil(rate)
  bool infrastructure = false;  // --infrastructure: an edge's key, no tenant

  bool AnySet() const {
    return !name.empty() || !tenant.empty() || infrastructure || !scopes.empty() ||
           !domains.empty() || !rate.empty() || !burst.empty();
  }
};

// Flags of qr.
struct QrFlags {
  std::string output;  // --output, -o: the file to write, - for stdout (required)
  std::string format;  // --format: png|svg; default from --output's extension
  std::string size;    // --size: pixels, 64-4096; default 256
  std::string margin;  // --margin: modules of quiet zone, 0-16; default 4
  std::string level;   // --level: error correction L|M|Q|H; default M

  bool AnySet() const {
    return !output.empty() || !format.empty() || !size.empty() || !margin.empty() || !level.empty();
  }
};

// What `stats` asks for besides the code. Empty strings mean "not given"
// (the service's defaults: the last 7 days, by day).
struct StatsFlags {
  std::string from;         // --from: RFC 3339 time, date, or duration back from now
  std::string to;           // --to: the same; default now
  std::string granularity;  // --granularity: hour|day
  bool csv = false;         // --csv: CSV (stats_csv.h) instead of the table
  std::string csv_top;      // --csv_top: FILE (or - for stdout) for the top lists; implies --csv

  bool AnySet() const {
    return !from.empty() || !to.empty() || !granularity.empty() || csv || !csv_top.empty();
  }
};

// What `update` asks for besides the code. Empty strings mean "not given".
struct UpdateFlags {
  std::string url;            // --url: the new target
  bool clear_labels = false;  // --clear_labels: remove every label
  bool history = false;       // get --history: the link's changes too

  bool AnySet() const { return !url.empty() || clear_labels; }
};

// What `list` asks for. Empty strings mean "not given" (the service's
// defaults: newest first, 100 per page, every link).
struct ListFlags {
  std::string filter;      // --filter: AIP-160 text (ListLinksRequest.filter)
  std::string order_by;    // --order_by: create_time desc|create_time|click_count desc
  std::string page_size;   // --page_size: links per call, 1-1000
  std::string page_token;  // --page_token: go on from a previous page
  bool all = false;        // --all: every page, one call after another

  bool AnySet() const {
    return !filter.empty() || !order_by.empty() || !page_size.empty() || !page_token.empty() || all;
  }
};

// What `import` and `export` ask for besides list's flags, --label,
// --tenant and -o (import.h, export.h). Empty strings mean "not given".
struct TransferFlags {
  std::string columns;          // --columns: THEIRS:OURS,... header renames (import)
  bool ignore_columns = false;  // --ignore_columns: skip unknown columns (import)
  std::string codes;            // --codes: keep|keep_or_new|new; default keep (import)
  std::string rejects;          // --rejects: CSV of the rows not imported (import)
  std::string delimiter;        // --delimiter: , ; tab |; default ","
  std::string state_file;       // --state_file: default FILE.import-state / FILE.export-state
  bool restart = false;         // --restart: ignore a state file, start from the top
  bool dry_run = false;         // --dry_run: check every row, call nothing (import)
  // Not flags: main.cc sets `progress` when stderr is a terminal; tests
  // shorten the first retry's wait.
  bool progress = false;
  absl::Duration retry_backoff = absl::Milliseconds(500);

  bool AnySet() const {
    return !columns.empty() || ignore_columns || !codes.empty() || !rejects.empty() ||
           !delimiter.empty() || !state_file.empty() || restart || dry_run;
  }
};

// The absolute time an --expire value names, relative to `now` for durations.
// Accepts an RFC 3339 time ("2027-01-01T00:00:00Z", offsets, fractions), a
// date ("2027-01-01", midnight UTC), an absl duration ("24h", "1h30m") or a
// number of days ("7d"). Durations must be positive.
// INVALID_ARGUMENT naming --expire for anything else.
absl::StatusOr<absl::Time> ParseExpire(absl::string_view text, absl::Time now);

// "301" → MOVED_PERMANENTLY, "302" → FOUND, "307" → TEMPORARY,
// "308" → PERMANENT. INVALID_ARGUMENT naming --redirect for anything else.
absl::StatusOr<v1::RedirectType> ParseRedirect(absl::string_view text);

// The request for one URL. INVALID_ARGUMENT for a bad --expire or --redirect
// (the URL itself is the server's to judge).
absl::StatusOr<v1::ShortenRequest> BuildShortenRequest(absl::string_view long_url,
                                                       const ShortenFlags& flags, absl::Time now);

// The labels of the --label flags ("k=v,k2=v2": ParseArgv joins repeated
// --label flags with commas, which no label holds). INVALID_ARGUMENT naming
// --label for an item without "=" or a key given twice; whether keys and
// values follow the label rule is the server's to judge.
absl::StatusOr<std::map<std::string, std::string>> ParseLabelFlags(absl::string_view text);

// The same for a list named `name` ("labels": import's column).
absl::StatusOr<std::map<std::string, std::string>> ParseLabelList(absl::string_view name,
                                                                  absl::string_view text);

// The GetClickStatsRequest.filter of `stats --label`: labels.KEY = "VALUE",
// joined with AND when there are several (the server answers which it
// supports).
std::string LabelFilter(const std::map<std::string, std::string>& labels);

// The request for `stats CODE`: --from and --to as --expire's values, but
// a duration counts back from `now` ("7d": a week ago); --granularity hour
// or day (any case). INVALID_ARGUMENT naming the flag otherwise. Whether the
// range makes sense is the server's to judge.
absl::StatusOr<v1::GetClickStatsRequest> BuildClickStatsRequest(absl::string_view code,
                                                                const StatsFlags& flags,
                                                                absl::Time now);

// The first request of `list`: --filter and the --label flags joined with
// AND (`labels` as ParseLabelFlags gives them), --order_by as given,
// --page_size a whole number 1-1000, --page_token, --tenant (another
// tenant's links: admin keys only). INVALID_ARGUMENT naming --page_size
// for anything else; the filter and order are the service's to judge.
absl::StatusOr<v1::ListLinksRequest> BuildListLinksRequest(
    const ListFlags& flags, const std::map<std::string, std::string>& labels,
    const std::string& tenant);

// The request for `update CODE`: --url, --expire (as shorten's, or "never"
// to remove the expiry), --redirect, --max_clicks (0: unlimited; taken
// only when `max_clicks_given`), --label (the new labels, replacing the
// old) or --clear_labels, each named in update_mask. INVALID_ARGUMENT
// naming the flag for a bad value, --label with --clear_labels, or no
// change at all.
absl::StatusOr<v1::UpdateLinkRequest> BuildUpdateLinkRequest(
    absl::string_view code, const UpdateFlags& update, const ShortenFlags& shorten,
    bool max_clicks_given, const std::map<std::string, std::string>& labels, absl::Time now);

// The request for `keys create`. --scopes and --domains are split at commas
// (blanks around items and empty items dropped). INVALID_ARGUMENT naming the
// flag for a missing --name or --scopes, a --rate that is not a finite
// number >= 0, or a --burst that is not an integer >= 0. The names of scopes
// and domains are the server's to judge.
absl::StatusOr<v1::CreateApiKeyRequest> BuildCreateApiKeyRequest(const KeyFlags& flags);

// The ID argument of `keys revoke`: a positive integer. INVALID_ARGUMENT
// otherwise.
absl::StatusOr<int64_t> ParseApiKeyId(absl::string_view text);

// qr's GetQrCodeRequest for `code`: --format png|svg (default from
// --output's extension: .svg is SVG, anything else PNG), --size in pixels,
// --margin in modules, --level L|M|Q|H (case-insensitive). INVALID_ARGUMENT
// naming the flag for a value that is not one of those or not a number; the
// ranges (64-4096 px, 0-16 modules) are the service's to check.
absl::StatusOr<v1::GetQrCodeRequest> BuildQrCodeRequest(const std::string& code,
                                                        const QrFlags& flags);

// The API key to send: the content of `file` (--api_key_file) when it is not
// empty, else `env_value` ($SHORTENER_API_KEY); surrounding whitespace
// dropped. Empty when neither is set: calls then go without a key (and the
// service answers UNAUTHENTICATED). INVALID_ARGUMENT naming --api_key_file or
// SHORTENER_API_KEY when the file cannot be read or is empty, or when the key
// holds characters a header cannot carry; FAILED_PRECONDITION when other
// users may write the file (a warning when they may read it: the rule of
// every secret file, lib/common/private_file.h). Never echoes the key.
absl::StatusOr<std::string> ResolveApiKey(const std::string& file, absl::string_view env_value);

// argv split into what shortenctl acts on.
struct CommandLine {
  bool help = false;                    // -h, --help or --helpfull was given
  std::vector<std::string> positional;  // command and its arguments
  std::set<std::string> flags_given;    // the names of the flags set ("max_clicks")
};

// Sets the absl flags defined in shortenctl's main.cc from argv[1..] and
// returns the rest. Flags may come before or after the command, as
// --name=value, --name value, -name=value; booleans also as --name and
// --noname; "--" ends the flags. --label may be given more than once (its
// values are joined with commas). Unlike absl::ParseCommandLine (which exits
// 1), an unknown flag, a missing or bad value is an INVALID_ARGUMENT the
// caller turns into a usage error (exit 2).
absl::StatusOr<CommandLine> ParseArgv(int argc, char** argv);

// One line: how to call `command` ("shorten", "keys create", ...; "keys"
// for all three keys subcommands), or the general synopsis for an unknown or
// empty command.
std::string UsageLine(absl::string_view command);

// The commands and global flags, for `shortenctl` without a command.
std::string UsageText();

// UsageText plus every shortenctl flag with its help and default, for --help.
std::string HelpText();

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_ARGS_H_
