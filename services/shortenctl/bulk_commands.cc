#include "services/shortenctl/bulk_commands.h"

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "services/shortenctl/args.h"
#include "services/shortenctl/client.h"

namespace shortener::ctl {
namespace {

// One line of output for `code`, which `verb` ("deleted", "revoked") says
// what happened to.
std::string CodeLine(const std::string& verb, const std::string& code, bool json) {
  if (!json) return absl::StrCat(verb, " ", code, "\n");
  return absl::StrCat("{\"code\":\"", absl::CEscape(code), "\",\"", verb, "\":true}\n");
}

// The request fields of a bulk walk: its filter (--filter and --label
// combined as list combines them), tenant, page size and token.
struct BulkRequest {
  std::string filter;
  std::string tenant;
  int page_size = 0;
  std::string page_token;
};

absl::StatusOr<BulkRequest> BuildBulkRequest(const Options& options) {
  if (!options.list.order_by.empty() || options.list.all) {
    return absl::InvalidArgumentError(
        "--order_by and --all apply to list only (delete and revoke always walk every page)");
  }
  absl::StatusOr<std::map<std::string, std::string>> labels = ParseLabelFlags(options.labels);
  if (!labels.ok()) return labels.status();
  ListFlags filter_only;
  filter_only.filter = options.list.filter;
  absl::StatusOr<v1::ListLinksRequest> list =
      BuildListLinksRequest(filter_only, *labels, options.keys.tenant);
  if (!list.ok()) return list.status();
  BulkRequest request;
  request.filter = list->filter();
  request.tenant = list->tenant();
  request.page_token = std::string(absl::StripAsciiWhitespace(options.list.page_token));
  if (!options.list.page_size.empty() &&
      (!absl::SimpleAtoi(options.list.page_size, &request.page_size) || request.page_size < 1 ||
       request.page_size > 10000)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--page_size must be a whole number from 1 to 10000 for delete and revoke, "
                     "got \"",
                     absl::CHexEscape(options.list.page_size), "\""));
  }
  return request;
}

// One call of the walk: the codes it changed and the token to go on with.
struct BulkStep {
  google::protobuf::RepeatedPtrField<std::string> codes;
  std::string next_page_token;
};

template <typename Request, typename Response>
absl::StatusOr<BulkStep> CallBulk(
    ShortenClient& client, const BulkRequest& bulk,
    absl::StatusOr<Response> (ShortenClient::*method)(const Request&)) {
  Request request;
  request.set_filter(bulk.filter);
  request.set_tenant(bulk.tenant);
  request.set_page_size(bulk.page_size);
  request.set_page_token(bulk.page_token);
  absl::StatusOr<Response> response = (client.*method)(request);
  if (!response.ok()) return response.status();
  return BulkStep{std::move(*response->mutable_codes()), response->next_page_token()};
}

}  // namespace

bool IsBulkCommand(absl::string_view command, const Options& options) {
  return (command == "delete" || command == "revoke") &&
         (!options.labels.empty() || !options.list.filter.empty());
}

int RunDelete(const Options& options, const std::vector<std::string>& args, Console io) {
  if (args.size() != 1) {
    return ReportUsageError(
        absl::StrCat("delete takes one CODE (or --label/--filter for many), got ", args.size(),
                     " arguments"),
        UsageLine("delete"), io.err);
  }
  if (options.list.AnySet()) {
    return ReportUsageError("--page_size and --page_token apply to delete --label/--filter only",
                            UsageLine("delete"), io.err);
  }
  absl::StatusOr<ShortenClient> client =
      ShortenClient::Connect(options.service, options.tls, options.timeout, options.api_key);
  if (!client.ok()) return ReportServiceError(client.status(), options.service, io.err);
  v1::DeleteLinkRequest request;
  request.set_code(args[0]);
  if (absl::Status deleted = client->DeleteLink(request); !deleted.ok()) {
    return ReportServiceError(deleted, options.service, io.err);
  }
  io.out << CodeLine("deleted", args[0], options.json);
  return kExitOk;
}

int RunBulk(absl::string_view command, const Options& options, const std::vector<std::string>& args,
            Console io) {
  const std::string usage = UsageLine(std::string(command));
  if (!args.empty()) {
    return ReportUsageError(absl::StrCat(command, " takes a CODE or --label/--filter, not both"),
                            usage, io.err);
  }
  absl::StatusOr<BulkRequest> request = BuildBulkRequest(options);
  if (!request.ok()) return ReportUsageError(request.status().message(), usage, io.err);
  absl::StatusOr<ShortenClient> client =
      ShortenClient::Connect(options.service, options.tls, options.timeout, options.api_key);
  if (!client.ok()) return ReportServiceError(client.status(), options.service, io.err);
  const bool deleting = command == "delete";
  const std::string verb = deleting ? "deleted" : "revoked";
  int64_t done = 0;
  for (;;) {
    absl::StatusOr<BulkStep> step = deleting
                                        ? CallBulk(*client, *request, &ShortenClient::DeleteLinks)
                                        : CallBulk(*client, *request, &ShortenClient::RevokeLinks);
    if (!step.ok()) {
      io.err << "shortenctl: " << verb << " " << done << " links; to go on from here: ";
      io.err << (request->page_token.empty() ? std::string("run the same command again")
                                             : "--page_token=" + request->page_token)
             << "\n";
      return ReportServiceError(step.status(), options.service, io.err);
    }
    for (const std::string& code : step->codes) io.out << CodeLine(verb, code, options.json);
    io.out.flush();
    done += step->codes.size();
    if (step->next_page_token.empty()) break;
    request->page_token = step->next_page_token;
  }
  if (!io.out) {
    io.err << "shortenctl: cannot write stdout (a closed pipe or a full disk)\n";
    return kExitServiceError;
  }
  io.err << "shortenctl: " << verb << " " << done << " links\n";
  return kExitOk;
}

}  // namespace shortener::ctl
