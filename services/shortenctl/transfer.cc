#include "services/shortenctl/transfer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "services/shortenctl/export.h"
#include "services/shortenctl/import.h"

namespace shortener::ctl {
namespace {

// The flags of other commands given to `command`, as a usage error's
// message; empty when there are none.
std::string ForeignFlags(const std::string& command, const Options& options) {
  const bool is_import = command == "import";
  if (options.json) return "--json does not go with import and export: they read and write CSV";
  KeyFlags keys = options.keys;
  if (!is_import) keys.tenant.clear();  // export's --tenant
  if (keys.AnySet()) {
    return absl::StrCat(
        "--name, --scopes, --domains, --rate, --burst and --infrastructure apply to keys create "
        "only",
        is_import ? " (and import makes links for your key's tenant: no --tenant)" : "");
  }
  QrFlags qr = options.qr;
  qr.output.clear();  // -o FILE
  if (qr.AnySet()) return "--format, --size, --margin and --level apply to qr only";
  if (options.stats.AnySet()) {
    return "--from, --to, --granularity, --csv and --csv_top apply to stats only";
  }
  if (options.update.AnySet() || options.update.history) {
    return "--url, --clear_labels and --history apply to update and get only";
  }
  ShortenFlags shorten = options.shorten;
  if (is_import) shorten.force_new = false;
  if (shorten.AnySet()) {
    return is_import ? "--alias, --expire, --redirect, --request_id and --max_clicks come from "
                       "the file's columns in import (--force_new and --label apply to every row)"
                     : "--alias, --expire, --redirect, --force_new, --request_id and --max_clicks "
                       "apply to shorten, batch and update only";
  }
  if (is_import && options.list.AnySet()) {
    return "--filter, --order_by, --page_size, --page_token and --all apply to list and export";
  }
  if (!is_import && options.list.all) return "export writes every page: --all is list's";
  const TransferFlags& t = options.transfer;
  if (!is_import && (!t.columns.empty() || t.ignore_columns || !t.codes.empty() ||
                     !t.rejects.empty() || t.dry_run)) {
    return "--columns, --ignore_columns, --codes, --rejects and --dry_run apply to import only";
  }
  return "";
}

}  // namespace

bool IsTransferCommand(absl::string_view command) {
  return command == "import" || command == "export";
}

int RunTransfer(const std::string& command, const Options& options,
                const std::vector<std::string>& args, Console io) {
  if (const std::string foreign = ForeignFlags(command, options); !foreign.empty()) {
    return ReportUsageError(foreign, UsageLine(command), io.err);
  }
  absl::StatusOr<std::string> api_key = ResolveApiKey(options.api_key_file, options.api_key);
  if (!api_key.ok()) return ReportUsageError(api_key.status().message(), UsageLine(""), io.err);
  Options resolved = options;
  resolved.api_key = *std::move(api_key);
  return command == "import" ? RunImport(resolved, args, io) : RunExport(resolved, args, io);
}

}  // namespace shortener::ctl
