#include "services/shortenctl/export.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/common/sha256.h"
#include "lib/common/status_macros.h"
#include "services/shortenctl/args.h"
#include "services/shortenctl/client.h"
#include "services/shortenctl/csv.h"
#include "services/shortenctl/files.h"
#include "services/shortenctl/interrupt.h"
#include "services/shortenctl/link_csv.h"
#include "services/shortenctl/progress.h"
#include "services/shortenctl/retry.h"
#include "services/shortenctl/transfer_state.h"

namespace shortener::ctl {
namespace {

constexpr int kExportPageSize = 1000;
constexpr absl::string_view kStateKind = "export";

// Which export a state file belongs to: its filter, order, tenant and
// separator.
std::string ListingId(const v1::ListLinksRequest& request, char separator) {
  const Sha256Bytes digest = Sha256(
      absl::StrCat(request.filter(), std::string(1, '\0'), request.order_by(), std::string(1, '\0'),
                   request.tenant(), std::string(1, '\0'), std::string(1, separator)));
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

class Exporter {
 public:
  Exporter(const Options& options, Console io, v1::ListLinksRequest request, char separator)
      : options_(options), io_(io), request_(std::move(request)), separator_(separator) {}

  int Run();

 private:
  int Usage(absl::string_view message) {
    return ReportUsageError(message, UsageLine("export"), io_.err);
  }
  void Note(const std::string& line) {
    if (progress_.has_value()) progress_->Clear();
    io_.err << "shortenctl: " << line << "\n";
  }
  // Opens FILE.partial, new or as the state file says; false when a usage
  // error was reported.
  absl::StatusOr<bool> OpenFile();
  absl::Status WritePage(const v1::ListLinksResponse& page);
  // Every page from request_'s token on; the exit code (kExitOk: all in).
  int ListPages();
  // Renames FILE.partial to FILE and says how many links were written.
  int Finish();
  int Fail(const absl::Status& status);

  const Options& options_;
  Console io_;
  v1::ListLinksRequest request_;
  char separator_;
  bool to_file_ = false;
  std::string state_path_;
  CsvOutputFile file_;
  int64_t links_ = 0;
  bool listing_done_ = false;  // every page is written
  std::optional<Progress> progress_;
};

absl::StatusOr<bool> Exporter::OpenFile() {
  const std::string& output = options_.qr.output;
  state_path_ = options_.transfer.state_file.empty() ? output + ".export-state"
                                                     : options_.transfer.state_file;
  std::optional<int64_t> resume_bytes;
  absl::StatusOr<std::string> text = ReadWholeFile(state_path_);
  if (!options_.transfer.restart && !absl::IsNotFound(text.status())) {
    if (!text.ok()) return text.status();
    absl::StatusOr<StateValues> values = ParseStateFile(kStateKind, *text);
    if (!values.ok() || (*values)["listing"] != ListingId(request_, separator_)) {
      Usage(absl::StrCat(state_path_, " is the state of another export (",
                         values.ok() ? "another --filter, --label, --order_by, --tenant or "
                                       "--delimiter"
                                     : values.status().message(),
                         "); --restart starts this one from the top"));
      return false;
    }
    SHORTENER_ASSIGN_OR_RETURN(resume_bytes, StateNumber(*values, "bytes"));
    SHORTENER_ASSIGN_OR_RETURN(links_, StateNumber(*values, "links"));
    request_.set_page_token((*values)["page_token"]);
    // Killed after the last page was written but before the rename.
    listing_done_ = (*values)["complete"] == "1";
    Note(absl::StrCat("export: going on after ", links_, " links (", output,
                      ".partial; --restart starts from the top)"));
  }
  SHORTENER_RETURN_IF_ERROR(
      file_.Open(output + ".partial", ExportHeader(), resume_bytes, separator_));
  return true;
}

absl::Status Exporter::WritePage(const v1::ListLinksResponse& page) {
  std::string rows;
  for (const v1::Link& link : page.links()) {
    if (to_file_) {
      file_.Write(ExportRow(link));
    } else {
      rows += FormatCsvRecord(ExportRow(link), /*guard=*/true, separator_);
    }
  }
  links_ += page.links_size();
  if (!to_file_) {
    io_.out << rows << std::flush;
    if (!io_.out) return absl::InternalError("cannot write stdout (a closed pipe or a full disk)");
    return absl::OkStatus();
  }
  SHORTENER_RETURN_IF_ERROR(file_.Flush());
  StateValues values = {{"listing", ListingId(request_, separator_)},
                        {"page_token", page.next_page_token()},
                        {"complete", page.next_page_token().empty() ? "1" : "0"},
                        {"bytes", absl::StrCat(file_.bytes())},
                        {"links", absl::StrCat(links_)}};
  return ReplaceFile(state_path_, FormatStateFile(kStateKind, values));
}

int Exporter::Fail(const absl::Status& status) {
  if (progress_.has_value()) progress_->Clear();
  if (to_file_) {
    io_.err << "shortenctl: export: " << links_ << " links in " << file_.path()
            << "; run the same command again to go on from there\n";
  } else if (!request_.page_token().empty()) {
    io_.err << "shortenctl: export: to go on from here (no header): --page_token="
            << request_.page_token() << " >> FILE\n";
  }
  if (absl::IsInternal(status)) {  // our file or stdout, not the service
    io_.err << "shortenctl: " << status.message() << "\n";
    return kExitServiceError;
  }
  return ReportServiceError(status, options_.service, io_.err);
}

int Exporter::Run() {
  to_file_ = !options_.qr.output.empty() && options_.qr.output != "-";
  if (to_file_ && !request_.page_token().empty()) {
    return Usage("--page_token goes with output to stdout (-o FILE goes on by itself)");
  }
  if (to_file_) {
    absl::StatusOr<bool> opened = OpenFile();
    if (!opened.ok()) return Fail(opened.status());
    if (!*opened) return kExitUsage;
  } else if (request_.page_token().empty()) {
    io_.out << FormatCsvRecord(ExportHeader(), /*guard=*/true, separator_);
  }
  if (!listing_done_) {
    if (int code = ListPages(); code != kExitOk) return code;
  }
  return Finish();
}

int Exporter::ListPages() {
  absl::StatusOr<ShortenClient> client =
      ShortenClient::Connect(options_.service, options_.tls, options_.timeout, options_.api_key);
  if (!client.ok()) return ReportServiceError(client.status(), options_.service, io_.err);
  progress_.emplace(io_.err, options_.transfer.progress, "export", "links", 0, links_);
  Backoff backoff(options_.transfer.retry_backoff);
  InterruptWatch interrupt;
  while (!listing_done_) {
    if (interrupt.interrupted()) {
      progress_->Clear();
      io_.err << "shortenctl: export: interrupted after " << links_ << " links; "
              << (to_file_ ? "run the same command again to go on"
                           : absl::StrCat("--page_token=", request_.page_token(),
                                          " goes on from here (no header; >> FILE)"))
              << "\n";
      return kExitInterrupted;
    }
    absl::StatusOr<v1::ListLinksResponse> page = client->ListLinks(request_);
    if (!page.ok()) {
      std::optional<absl::Duration> wait = backoff.Next(page.status());
      if (!wait.has_value()) return Fail(page.status());
      Note(DescribeRetry(page.status(), *wait));
      absl::SleepFor(*wait);
      continue;
    }
    backoff.Reset();
    if (absl::Status written = WritePage(*page); !written.ok()) return Fail(written);
    progress_->Update(links_, 0);
    listing_done_ = page->next_page_token().empty();
    request_.set_page_token(page->next_page_token());
  }
  progress_->Clear();
  return kExitOk;
}

int Exporter::Finish() {
  std::string where = "stdout";
  if (to_file_) {
    if (absl::Status closed = file_.Close(); !closed.ok()) return Fail(closed);
    std::error_code error;
    std::filesystem::rename(file_.path(), options_.qr.output, error);
    if (error) {
      return Fail(absl::InternalError(absl::StrCat("cannot rename ", file_.path(), " to ",
                                                   options_.qr.output, ": ", error.message())));
    }
    std::filesystem::remove(state_path_, error);
    where = options_.qr.output;
  }
  io_.err << "shortenctl: export: " << links_ << " links written to " << where << "\n";
  return kExitOk;
}

}  // namespace

int RunExport(const Options& options, const std::vector<std::string>& args, Console io) {
  if (!args.empty()) {
    return ReportUsageError("export takes no arguments (choose links with --label and --filter)",
                            UsageLine("export"), io.err);
  }
  absl::StatusOr<std::map<std::string, std::string>> labels = ParseLabelFlags(options.labels);
  if (!labels.ok()) {
    return ReportUsageError(labels.status().message(), UsageLine("export"), io.err);
  }
  absl::StatusOr<v1::ListLinksRequest> request =
      BuildListLinksRequest(options.list, *labels, options.keys.tenant);
  if (!request.ok()) {
    return ReportUsageError(request.status().message(), UsageLine("export"), io.err);
  }
  if (request->page_size() == 0) request->set_page_size(kExportPageSize);
  absl::StatusOr<char> separator = ParseSeparator(options.transfer.delimiter);
  if (!separator.ok()) {
    return ReportUsageError(separator.status().message(), UsageLine("export"), io.err);
  }
  return Exporter(options, io, *std::move(request), *separator).Run();
}

}  // namespace shortener::ctl
