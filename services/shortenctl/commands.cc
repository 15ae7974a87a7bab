#include "services/shortenctl/commands.h"

#include <cstdint>
#include <fstream>
#include <istream>
#include <map>
#include <ostream>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/common/status_macros.h"
#include "services/shortenctl/args.h"
#include "services/shortenctl/bulk_commands.h"
#include "services/shortenctl/client.h"
#include "services/shortenctl/files.h"
#include "services/shortenctl/format.h"
#include "services/shortenctl/stats_csv.h"
#include "services/shortenctl/transfer.h"

namespace shortener::ctl {
namespace {

// BatchShorten takes at most this many requests per call.
constexpr int kBatchChunk = 1000;

using Args = std::vector<std::string>;

// Run has put the key to send (from --api_key_file or the environment) in
// options.api_key.
absl::StatusOr<ShortenClient> Connect(const Options& options) {
  return ShortenClient::Connect(options.service, options.tls, options.timeout, options.api_key);
}

// Usage checks shared by the commands that take exactly one CODE.
absl::Status CheckCodeArgs(absl::string_view command, const Args& args, const Options& options) {
  if (args.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(command, " takes one CODE, got ", args.size(), " arguments"));
  }
  if (options.shorten.AnySet()) {
    return absl::InvalidArgumentError(
        "--alias, --expire, --redirect, --force_new, --request_id and --max_clicks apply to "
        "shorten, batch and update only");
  }
  return absl::OkStatus();
}

// Adds the --label labels to `request`.
absl::Status SetLabels(const std::string& label_flags, v1::ShortenRequest* request) {
  SHORTENER_ASSIGN_OR_RETURN(auto labels, ParseLabelFlags(label_flags));
  request->mutable_labels()->insert(labels.begin(), labels.end());
  return absl::OkStatus();
}

int RunShorten(const Options& options, const Args& args, Console io) {
  if (args.size() != 1) {
    return ReportUsageError(
        args.empty() ? "shorten needs a URL" : "shorten takes one URL (use batch for many)",
        UsageLine("shorten"), io.err);
  }
  absl::StatusOr<v1::ShortenRequest> request =
      BuildShortenRequest(args[0], options.shorten, absl::Now());
  if (request.ok()) {
    if (absl::Status labels = SetLabels(options.labels, &*request); !labels.ok()) request = labels;
  }
  if (!request.ok()) {
    return ReportUsageError(request.status().message(), UsageLine("shorten"), io.err);
  }
  absl::StatusOr<ShortenClient> client = Connect(options);
  if (!client.ok()) return ReportServiceError(client.status(), options.service, io.err);
  absl::StatusOr<v1::ShortenResponse> response = client->Shorten(*request);
  if (!response.ok()) return ReportServiceError(response.status(), options.service, io.err);
  io.out << FormatShortenResponse(*response, options.json);
  return kExitOk;
}

// Sends one chunk and prints a line per URL. Counts the URLs the service
// refused in *failed; returns the status of the call itself.
absl::Status SendBatchChunk(ShortenClient& client, const v1::BatchShortenRequest& chunk,
                            const Options& options, Console io, int* failed) {
  absl::StatusOr<v1::BatchShortenResponse> response = client.BatchShorten(chunk);
  if (!response.ok()) return response.status();
  for (int i = 0; i < chunk.requests_size(); ++i) {
    v1::BatchShortenResult result;
    if (i < response->results_size()) {
      result = response->results(i);
    } else {  // a short answer must not shift lines against the input
      result.mutable_error()->set_code(static_cast<int>(absl::StatusCode::kInternal));
      result.mutable_error()->set_message("the service returned no result for this URL");
    }
    if (!result.has_response()) ++*failed;
    io.out << FormatBatchResult(chunk.requests(i).long_url(), result, options.json);
  }
  io.out.flush();
  return absl::OkStatus();
}

int RunBatch(const Options& options, const Args& args, Console io) {
  if (args.size() != 1) {
    return ReportUsageError("batch takes one FILE (- for stdin)", UsageLine("batch"), io.err);
  }
  if (!options.shorten.alias.empty() || !options.shorten.request_id.empty()) {
    return ReportUsageError("--alias and --request_id apply to shorten only", UsageLine("batch"),
                            io.err);
  }
  // Every item shares expiry, redirect, force_new and labels: check them once.
  absl::StatusOr<v1::ShortenRequest> item = BuildShortenRequest("", options.shorten, absl::Now());
  if (item.ok()) {
    if (absl::Status labels = SetLabels(options.labels, &*item); !labels.ok()) item = labels;
  }
  if (!item.ok()) return ReportUsageError(item.status().message(), UsageLine("batch"), io.err);

  std::ifstream file;
  std::istream* in = &io.in;
  if (args[0] != "-") {
    file.open(args[0]);
    if (!file) {
      return ReportUsageError(absl::StrCat("cannot open ", args[0]), UsageLine("batch"), io.err);
    }
    in = &file;
  }
  absl::StatusOr<ShortenClient> client = Connect(options);
  if (!client.ok()) return ReportServiceError(client.status(), options.service, io.err);

  int total = 0;
  int failed = 0;
  v1::BatchShortenRequest chunk;
  std::string line;
  while (true) {
    const bool more = static_cast<bool>(std::getline(*in, line));
    const absl::string_view url = absl::StripAsciiWhitespace(line);
    if (more && !url.empty() && url[0] != '#') {  // skip blank lines and comments
      v1::ShortenRequest* request = chunk.add_requests();
      *request = *item;
      request->set_long_url(std::string(url));
      ++total;
    }
    if (chunk.requests_size() == kBatchChunk || (!more && chunk.requests_size() > 0)) {
      absl::Status sent = SendBatchChunk(*client, chunk, options, io, &failed);
      if (!sent.ok()) return ReportServiceError(sent, options.service, io.err);
      chunk.clear_requests();
    }
    if (!more) break;
  }
  if (failed > 0) {
    io.err << "shortenctl: " << failed << " of " << total << " URLs failed\n";
    return kExitServiceError;
  }
  return kExitOk;
}

int RunResolve(const Options& options, const Args& args, Console io) {
  if (absl::Status usage = CheckCodeArgs("resolve", args, options); !usage.ok()) {
    return ReportUsageError(usage.message(), UsageLine("resolve"), io.err);
  }
  absl::StatusOr<ShortenClient> client = Connect(options);
  if (!client.ok()) return ReportServiceError(client.status(), options.service, io.err);
  v1::ResolveRequest request;
  request.set_code(args[0]);
  absl::StatusOr<v1::ResolveResponse> response = client->Resolve(request);
  if (!response.ok()) return ReportServiceError(response.status(), options.service, io.err);
  io.out << FormatResolveResponse(args[0], *response, options.json);
  return kExitOk;
}

// get and revoke: same arguments, both answer with the Link.
int RunLinkCommand(absl::string_view command, const Options& options, const Args& args,
                   Console io) {
  if (absl::Status usage = CheckCodeArgs(command, args, options); !usage.ok()) {
    return ReportUsageError(usage.message(), UsageLine(command), io.err);
  }
  absl::StatusOr<ShortenClient> client = Connect(options);
  if (!client.ok()) return ReportServiceError(client.status(), options.service, io.err);
  absl::StatusOr<v1::Link> link;
  if (command == "get") {
    v1::GetLinkRequest request;
    request.set_code(args[0]);
    if (options.update.history) request.set_view(v1::LINK_VIEW_FULL);
    link = client->GetLink(request);
  } else {
    v1::RevokeRequest request;
    request.set_code(args[0]);
    link = client->Revoke(request);
  }
  if (!link.ok()) return ReportServiceError(link.status(), options.service, io.err);
  io.out << FormatLink(*link, options.json);
  return kExitOk;
}

int RunQr(const Options& options, const Args& args, Console io) {
  if (absl::Status usage = CheckCodeArgs("qr", args, options); !usage.ok()) {
    return ReportUsageError(usage.message(), UsageLine("qr"), io.err);
  }
  if (options.qr.output.empty()) {
    return ReportUsageError("qr needs -o FILE (or -o - for stdout)", UsageLine("qr"), io.err);
  }
  absl::StatusOr<v1::GetQrCodeRequest> request = BuildQrCodeRequest(args[0], options.qr);
  if (!request.ok()) return ReportUsageError(request.status().message(), UsageLine("qr"), io.err);
  absl::StatusOr<ShortenClient> client = Connect(options);
  if (!client.ok()) return ReportServiceError(client.status(), options.service, io.err);
  absl::StatusOr<v1::QrCode> qr = client->GetQrCode(*request);
  if (!qr.ok()) return ReportServiceError(qr.status(), options.service, io.err);
  if (options.qr.output == "-") {
    io.out << qr->content();
    io.out.flush();
    if (!io.out) {
      io.err << "shortenctl: cannot write stdout (a closed pipe or a full disk)\n";
      return kExitServiceError;
    }
    io.err << FormatQrWritten("-", *qr, options.json);
    return kExitOk;
  }
  if (absl::Status written = ReplaceFile(options.qr.output, qr->content()); !written.ok()) {
    io.err << "shortenctl: " << written.message() << "\n";
    return kExitServiceError;
  }
  io.out << FormatQrWritten(options.qr.output, *qr, options.json);
  return kExitOk;
}

int RunUpdate(const Options& options, const Args& args, Console io) {
  if (args.size() != 1) {
    return ReportUsageError(absl::StrCat("update takes one CODE, got ", args.size(), " arguments"),
                            UsageLine("update"), io.err);
  }
  if (!options.shorten.alias.empty() || options.shorten.force_new ||
      !options.shorten.request_id.empty()) {
    return ReportUsageError("--alias, --force_new and --request_id apply to shorten only",
                            UsageLine("update"), io.err);
  }
  absl::StatusOr<std::map<std::string, std::string>> labels = ParseLabelFlags(options.labels);
  if (!labels.ok()) {
    return ReportUsageError(labels.status().message(), UsageLine("update"), io.err);
  }
  absl::StatusOr<v1::UpdateLinkRequest> request =
      BuildUpdateLinkRequest(args[0], options.update, options.shorten,
                             options.flags_given.count("max_clicks") > 0, *labels, absl::Now());
  if (!request.ok()) {
    return ReportUsageError(request.status().message(), UsageLine("update"), io.err);
  }
  absl::StatusOr<ShortenClient> client = Connect(options);
  if (!client.ok()) return ReportServiceError(client.status(), options.service, io.err);
  absl::StatusOr<v1::Link> link = client->UpdateLink(*request);
  if (!link.ok()) return ReportServiceError(link.status(), options.service, io.err);
  io.out << FormatLink(*link, options.json);
  return kExitOk;
}

int RunList(const Options& options, const Args& args, Console io) {
  if (!args.empty()) {
    return ReportUsageError("list takes no arguments (choose links with --label and --filter)",
                            UsageLine("list"), io.err);
  }
  if (options.list.all && !options.list.page_token.empty()) {
    return ReportUsageError("--all starts from the first page: give --page_token or --all",
                            UsageLine("list"), io.err);
  }
  absl::StatusOr<std::map<std::string, std::string>> labels = ParseLabelFlags(options.labels);
  if (!labels.ok()) return ReportUsageError(labels.status().message(), UsageLine("list"), io.err);
  absl::StatusOr<v1::ListLinksRequest> request =
      BuildListLinksRequest(options.list, *labels, options.keys.tenant);
  if (!request.ok()) {
    return ReportUsageError(request.status().message(), UsageLine("list"), io.err);
  }
  absl::StatusOr<ShortenClient> client = Connect(options);
  if (!client.ok()) return ReportServiceError(client.status(), options.service, io.err);
  // Each page is printed as it arrives: --all over a million links holds one
  // page at a time, and a failure half-way leaves what was printed and the
  // token to go on from.
  for (bool first = true;; first = false) {
    absl::StatusOr<v1::ListLinksResponse> page = client->ListLinks(*request);
    if (!page.ok()) {
      if (!first) {
        io.err << "shortenctl: to go on from here: --page_token=" << request->page_token() << "\n";
      }
      return ReportServiceError(page.status(), options.service, io.err);
    }
    io.out << FormatLinkPage(*page, first, options.json);
    io.out.flush();
    if (!io.out) {
      io.err << "shortenctl: cannot write stdout (a closed pipe or a full disk)\n";
      return kExitServiceError;
    }
    if (page->next_page_token().empty()) return kExitOk;
    if (!options.list.all) {
      io.err << "shortenctl: more links: --page_token=" << page->next_page_token()
             << " (or --all)\n";
      return kExitOk;
    }
    request->set_page_token(page->next_page_token());
  }
}

int RunStats(const Options& options, const Args& args, Console io) {
  // stats CODE, or stats --label k=v: the label's links.
  const bool by_label = !options.labels.empty();
  if (by_label && !args.empty()) {
    return ReportUsageError("stats takes a CODE or --label, not both", UsageLine("stats"), io.err);
  }
  if (by_label && options.shorten.AnySet()) {
    return ReportUsageError(
        "--alias, --expire, --redirect, --force_new, --request_id and --max_clicks apply to "
        "shorten, batch and update only",
        UsageLine("stats"), io.err);
  }
  if (!by_label && !options.keys.tenant.empty()) {
    return ReportUsageError("--tenant applies to stats --label only (a code names its own link)",
                            UsageLine("stats"), io.err);
  }
  if (absl::Status usage = by_label ? absl::OkStatus() : CheckCodeArgs("stats", args, options);
      !usage.ok()) {
    return ReportUsageError(usage.message(), UsageLine("stats"), io.err);
  }
  absl::StatusOr<std::map<std::string, std::string>> labels = ParseLabelFlags(options.labels);
  if (!labels.ok()) return ReportUsageError(labels.status().message(), UsageLine("stats"), io.err);
  const std::string subject = by_label ? LabelFilter(*labels) : args[0];
  absl::StatusOr<v1::GetClickStatsRequest> request =
      BuildClickStatsRequest(by_label ? "" : subject, options.stats, absl::Now());
  if (request.ok() && by_label) {
    request->set_filter(subject);
    // Another tenant's labels: admin keys only (the service says so to
    // anyone else).
    request->set_tenant(std::string(absl::StripAsciiWhitespace(options.keys.tenant)));
  }
  if (!request.ok()) {
    return ReportUsageError(request.status().message(), UsageLine("stats"), io.err);
  }
  if (absl::Status csv = CheckCsvFlags(options.stats, options.json); !csv.ok()) {
    return ReportUsageError(csv.message(), UsageLine("stats"), io.err);
  }
  absl::StatusOr<ShortenClient> client = Connect(options);
  if (!client.ok()) return ReportServiceError(client.status(), options.service, io.err);
  absl::StatusOr<v1::GetClickStatsResponse> response = client->GetClickStats(*request);
  if (!response.ok()) return ReportServiceError(response.status(), options.service, io.err);
  if (options.stats.csv || !options.stats.csv_top.empty()) {
    return WriteClickStatsCsv(options.stats, *response, io);
  }
  io.out << FormatClickStats(subject, *request, *response, options.json);
  return kExitOk;
}

int RunKeysCreate(const Options& options, const Args& args, Console io) {
  if (!args.empty()) {
    return ReportUsageError(absl::StrCat("keys create takes flags only, got \"", args[0],
                                         "\" (the name goes in --name)"),
                            UsageLine("keys create"), io.err);
  }
  absl::StatusOr<v1::CreateApiKeyRequest> request = BuildCreateApiKeyRequest(options.keys);
  if (!request.ok()) {
    return ReportUsageError(request.status().message(), UsageLine("keys create"), io.err);
  }
  absl::StatusOr<ShortenClient> client = Connect(options);
  if (!client.ok()) return ReportServiceError(client.status(), options.service, io.err);
  absl::StatusOr<v1::CreateApiKeyResponse> response = client->CreateApiKey(*request);
  if (!response.ok()) return ReportServiceError(response.status(), options.service, io.err);
  // stdout holds only the key (or the JSON), so that `> FILE` makes a key
  // file; what it is and that it is shown once is for the person, on stderr.
  io.out << FormatCreatedApiKey(*response, options.json);
  io.out.flush();
  if (!options.json) io.err << DescribeCreatedApiKey(response->api_key());
  return kExitOk;
}

int RunKeysList(const Options& options, const Args& args, Console io) {
  if (!args.empty()) {
    return ReportUsageError("keys list takes no arguments", UsageLine("keys list"), io.err);
  }
  absl::StatusOr<ShortenClient> client = Connect(options);
  if (!client.ok()) return ReportServiceError(client.status(), options.service, io.err);
  absl::StatusOr<v1::ListApiKeysResponse> response = client->ListApiKeys({});
  if (!response.ok()) return ReportServiceError(response.status(), options.service, io.err);
  io.out << FormatApiKeyList(*response, options.json);
  return kExitOk;
}

int RunKeysRevoke(const Options& options, const Args& args, Console io) {
  if (args.size() != 1) {
    return ReportUsageError(
        absl::StrCat("keys revoke takes one ID, got ", args.size(), " arguments"),
        UsageLine("keys revoke"), io.err);
  }
  absl::StatusOr<int64_t> id = ParseApiKeyId(args[0]);
  if (!id.ok()) return ReportUsageError(id.status().message(), UsageLine("keys revoke"), io.err);
  absl::StatusOr<ShortenClient> client = Connect(options);
  if (!client.ok()) return ReportServiceError(client.status(), options.service, io.err);
  v1::RevokeApiKeyRequest request;
  request.set_id(*id);
  absl::StatusOr<v1::ApiKey> key = client->RevokeApiKey(request);
  if (!key.ok()) return ReportServiceError(key.status(), options.service, io.err);
  io.out << FormatApiKey(*key, options.json);
  return kExitOk;
}

// keys create|list|revoke ARGS.
int RunKeys(const Options& options, const Args& args, Console io) {
  if (args.empty()) {
    return ReportUsageError("keys needs a subcommand: create, list or revoke", UsageLine("keys"),
                            io.err);
  }
  const std::string& sub = args[0];
  const Args rest(args.begin() + 1, args.end());
  if (sub != "create" && sub != "list" && sub != "revoke") {
    return ReportUsageError(absl::StrCat("unknown keys subcommand \"", sub, "\""),
                            UsageLine("keys"), io.err);
  }
  if (options.shorten.AnySet()) {
    return ReportUsageError(
        "--alias, --expire, --redirect, --force_new, --request_id and --max_clicks apply to "
        "shorten, batch and update only",
        UsageLine("keys " + sub), io.err);
  }
  if (sub == "create") return RunKeysCreate(options, rest, io);
  if (sub == "list") return RunKeysList(options, rest, io);
  return RunKeysRevoke(options, rest, io);
}

bool IsCommand(absl::string_view command) {
  for (absl::string_view known : {"shorten", "batch", "resolve", "get", "update", "list", "qr",
                                  "revoke", "delete", "stats", "keys"}) {
    if (command == known) return true;
  }
  return IsTransferCommand(command);
}

}  // namespace

int ReportUsageError(absl::string_view message, absl::string_view usage_line, std::ostream& err) {
  err << "shortenctl: " << message << "\n" << usage_line << "\n";
  return kExitUsage;
}

int ReportServiceError(const absl::Status& status, absl::string_view service, std::ostream& err) {
  err << "shortenctl: " << absl::StatusCodeToString(status.code()) << ": " << status.message()
      << "\n";
  if (status.code() == absl::StatusCode::kUnavailable) {
    err << "shortenctl: is shorten-service running at " << service << "?\n";
  }
  if (status.code() == absl::StatusCode::kUnauthenticated) {
    err << "shortenctl: pass --api_key_file=PATH or set SHORTENER_API_KEY\n";
  }
  return kExitServiceError;
}

int Run(const Options& options, const std::vector<std::string>& args, Console io) {
  if (args.empty()) {
    io.err << UsageText();
    return kExitUsage;
  }
  if (options.timeout <= absl::ZeroDuration()) {
    return ReportUsageError("--timeout must be positive", UsageLine(""), io.err);
  }
  // Flags that do not go together are a usage error; a TLS file that cannot
  // be read is found when connecting, like an unreachable service.
  if (absl::Status tls = grpcutil::ValidateClientTlsOptions(options.tls); !tls.ok()) {
    return ReportUsageError(tls.message(), UsageLine(""), io.err);
  }
  const std::string& command = args[0];
  const Args rest(args.begin() + 1, args.end());
  if (!IsCommand(command)) {
    return ReportUsageError(absl::StrCat("unknown command \"", command, "\""), UsageLine(""),
                            io.err);
  }
  if (IsTransferCommand(command)) return RunTransfer(command, options, rest, io);  // own checks
  if (options.transfer.AnySet()) {
    return ReportUsageError(
        "--columns, --ignore_columns, --codes, --rejects, --delimiter, --state_file, --restart and "
        "--dry_run apply to import and export only",
        UsageLine(command), io.err);
  }
  // --tenant also names whose links stats --label counts (RunStats checks
  // the rest); every other keys flag is keys create's alone.
  KeyFlags keys_flags = options.keys;
  const bool bulk = IsBulkCommand(command, options);
  if (command == "stats" || command == "list" || bulk) keys_flags.tenant.clear();
  if (keys_flags.AnySet() && !(command == "keys" && !rest.empty() && rest[0] == "create")) {
    return ReportUsageError(
        "--name, --tenant, --scopes, --domains, --rate, --burst and --infrastructure apply to "
        "keys create only (and --tenant to stats --label, list, and delete and revoke --label)",
        UsageLine(command), io.err);
  }
  if (!options.labels.empty() && command != "shorten" && command != "batch" && command != "stats" &&
      command != "list" && command != "update" && !bulk) {
    return ReportUsageError(
        "--label applies to shorten, batch, stats, list, update, revoke and delete only",
        UsageLine(command), io.err);
  }
  if (options.update.AnySet() && command != "update") {
    return ReportUsageError("--url and --clear_labels apply to update only", UsageLine(command),
                            io.err);
  }
  if (options.update.history && command != "get") {
    return ReportUsageError("--history applies to get only", UsageLine(command), io.err);
  }
  if (options.list.AnySet() && command != "list" && command != "delete" && !bulk) {
    return ReportUsageError(
        "--filter, --order_by, --page_size, --page_token and --all apply to list only (and "
        "--filter, --page_size, --page_token to delete and revoke)",
        UsageLine(command), io.err);
  }
  if ((command == "list" || command == "delete" || bulk) && options.shorten.AnySet()) {
    return ReportUsageError(
        "--alias, --expire, --redirect, --force_new, --request_id and --max_clicks apply to "
        "shorten, batch and update only",
        UsageLine(command), io.err);
  }
  if (options.qr.AnySet() && command != "qr") {
    return ReportUsageError("-o/--output, --format, --size, --margin and --level apply to qr only",
                            UsageLine(command), io.err);
  }
  if (options.stats.AnySet() && command != "stats") {
    return ReportUsageError("--from, --to, --granularity, --csv and --csv_top apply to stats only",
                            UsageLine(command), io.err);
  }
  absl::StatusOr<std::string> api_key = ResolveApiKey(options.api_key_file, options.api_key);
  if (!api_key.ok()) return ReportUsageError(api_key.status().message(), UsageLine(""), io.err);
  Options resolved = options;
  resolved.api_key = *std::move(api_key);

  if (command == "shorten") return RunShorten(resolved, rest, io);
  if (command == "batch") return RunBatch(resolved, rest, io);
  if (command == "resolve") return RunResolve(resolved, rest, io);
  if (command == "keys") return RunKeys(resolved, rest, io);
  if (command == "stats") return RunStats(resolved, rest, io);
  if (command == "qr") return RunQr(resolved, rest, io);
  if (command == "list") return RunList(resolved, rest, io);
  if (command == "update") return RunUpdate(resolved, rest, io);
  if (bulk) return RunBulk(command, resolved, rest, io);
  if (command == "delete") return RunDelete(resolved, rest, io);
  return RunLinkCommand(command, resolved, rest, io);  // get, revoke
}

}  // namespace shortener::ctl
