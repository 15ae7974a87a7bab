#include "services/shortenctl/import.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/codec/alias.h"
#include "lib/common/status_macros.h"
#include "services/shortenctl/batch_sender.h"
#include "services/shortenctl/client.h"
#include "services/shortenctl/csv.h"
#include "services/shortenctl/files.h"
#include "services/shortenctl/import_rows.h"
#include "services/shortenctl/interrupt.h"
#include "services/shortenctl/link_csv.h"
#include "services/shortenctl/progress.h"
#include "services/shortenctl/transfer_state.h"

namespace shortener::ctl {
namespace {

constexpr int kRejectsOnStderr = 10;
constexpr absl::string_view kStateKind = "import";

// One row of the file on its way.
struct PendingRow {
  CsvRecord record;
  std::string code;                           // the row's code, trimmed
  std::optional<v1::ShortenRequest> request;  // unset: rejected or skipped here
  std::string problem;                        // why it is rejected here
  bool skipped = false;
  bool code_problem = false;  // the problem is its code
};

// How a state file names an output file: its absolute path, escaped onto
// one line; "" for none.
std::string FileKey(const std::string& path) {
  if (path.empty()) return "";
  std::error_code error;
  return absl::CEscape(std::filesystem::weakly_canonical(path, error).string());
}

class Importer {
 public:
  Importer(const Options& options, Console io, CodePolicy codes, char separator)
      : options_(options), io_(io), codes_(codes), separator_(separator) {}

  int Run(const std::string& path);

 private:
  int Usage(absl::string_view message) {
    return ReportUsageError(message, UsageLine("import"), io_.err);
  }
  int Failed(const absl::Status& status);
  // Stopped by Ctrl-C after a batch: says where to go on; kExitInterrupted.
  int Interrupted();
  void Note(const std::string& line) {
    if (progress_ != nullptr) progress_->Clear();
    io_.err << "shortenctl: " << line << "\n";
  }
  absl::StatusOr<bool> LoadState(const std::string& input_id);
  // The input, --rejects, -o and the state file must be four files.
  absl::Status CheckFilesApart(const std::string& input) const;
  absl::Status OpenOutputs(const std::vector<std::string>& header);
  PendingRow Prepare(CsvRecord record);
  absl::Status ProcessBatch(std::vector<PendingRow>& rows);
  absl::Status SendAndRecord(std::vector<PendingRow>& rows);
  void Reject(const PendingRow& row, absl::string_view reason);
  void Imported(const PendingRow& row, const v1::ShortenResponse& response);
  absl::Status SaveState(CsvPosition after);
  std::string Summary() const;

  const Options& options_;
  Console io_;
  CodePolicy codes_;
  char separator_;
  std::unique_ptr<ShortenClient> client_;
  std::unique_ptr<BatchSender> sender_;
  std::unique_ptr<Progress> progress_;
  HeaderMap header_;
  std::map<std::string, std::string> extra_labels_;  // --label
  std::string input_id_;
  std::string state_path_;
  CsvPosition resume_at_;
  // Resuming: how long the --rejects and -o files were at the saved state.
  std::optional<int64_t> resume_rejects_bytes_;
  std::optional<int64_t> resume_output_bytes_;
  ImportCounts counts_;
  CsvOutputFile rejects_;
  CsvOutputFile output_;
  int64_t rejects_on_stderr_ = 0;
};

int Importer::Interrupted() {
  if (progress_ != nullptr) progress_->Clear();
  io_.err << "shortenctl: import: interrupted: " << Summary() << "\n";
  if (!options_.transfer.dry_run) {
    io_.err << "shortenctl: run the same command again to go on from line " << resume_at_.line
            << "\n";
  }
  return kExitInterrupted;
}

int Importer::Failed(const absl::Status& status) {
  if (progress_ != nullptr) progress_->Clear();
  io_.err << "shortenctl: import: " << Summary() << "\n";
  if (!options_.transfer.dry_run) {
    io_.err << "shortenctl: run the same command again to go on from line " << resume_at_.line
            << "\n";
  }
  return ReportServiceError(status, options_.service, io_.err);
}

absl::StatusOr<bool> Importer::LoadState(const std::string& input_id) {
  absl::StatusOr<std::string> text = ReadWholeFile(state_path_);
  if (absl::IsNotFound(text.status())) return false;
  if (!text.ok()) return text.status();
  absl::StatusOr<StateValues> values = ParseStateFile(kStateKind, *text);
  if (!values.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(state_path_, ": ", values.status().message(), "; --restart ignores it"));
  }
  if ((*values)["input"] != input_id) {
    return absl::InvalidArgumentError(
        absl::StrCat(state_path_,
                     " is the state of another file (its first 64 KiB differ); --restart "
                     "starts this one from the top"));
  }
  SHORTENER_ASSIGN_OR_RETURN(resume_at_.offset, StateNumber(*values, "offset"));
  SHORTENER_ASSIGN_OR_RETURN(resume_at_.line, StateNumber(*values, "line"));
  SHORTENER_RETURN_IF_ERROR(counts_.Read(*values));
  if ((*values)["delimiter"] != absl::StrCat(static_cast<int>(separator_))) {
    return absl::InvalidArgumentError(
        absl::StrCat("the interrupted import (", state_path_,
                     ") read another --delimiter: give the same to go on, or --restart"));
  }
  // The files the interrupted run wrote are cut back and appended to: they
  // must be the same files (or none then and none now).
  for (const auto& [key, path] : {std::pair{"rejects", &options_.transfer.rejects},
                                  std::pair{"output", &options_.qr.output}}) {
    if ((*values)[key] != FileKey(*path)) {
      return absl::InvalidArgumentError(
          absl::StrCat("the interrupted import (", state_path_, ") wrote ",
                       key == std::string("rejects") ? "--rejects" : "-o", " to \"", (*values)[key],
                       "\": give it again to go on, or --restart"));
    }
  }
  SHORTENER_ASSIGN_OR_RETURN(resume_rejects_bytes_, StateNumber(*values, "rejects_bytes"));
  SHORTENER_ASSIGN_OR_RETURN(resume_output_bytes_, StateNumber(*values, "output_bytes"));
  return true;
}

absl::Status Importer::OpenOutputs(const std::vector<std::string>& header) {
  if (!options_.transfer.rejects.empty()) {
    std::vector<std::string> rejects_header;
    for (size_t i = 0; i < header.size(); ++i) {
      const LinkColumn c = header_.columns[i];
      if (c != LinkColumn::kImportLine && c != LinkColumn::kImportError) {
        rejects_header.push_back(header[i]);
      }
    }
    rejects_header.insert(rejects_header.end(), {"import_line", "import_error"});
    SHORTENER_RETURN_IF_ERROR(rejects_.Open(options_.transfer.rejects, rejects_header,
                                            resume_rejects_bytes_, separator_));
  }
  if (!options_.qr.output.empty()) {
    SHORTENER_RETURN_IF_ERROR(output_.Open(
        options_.qr.output, {"line", "old_code", "code", "short_url", "long_url", "created"},
        resume_output_bytes_, separator_));
  }
  return absl::OkStatus();
}

absl::Status Importer::CheckFilesApart(const std::string& input) const {
  std::error_code error;
  const auto where = [&error](const std::string& p) {
    return std::filesystem::weakly_canonical(p, error);
  };
  const std::string& rejects = options_.transfer.rejects;
  const std::string& output = options_.qr.output;
  for (const std::string* file : {&rejects, &output, &state_path_}) {
    if (!file->empty() && where(*file) == where(input)) {
      return absl::InvalidArgumentError(
          absl::StrCat(*file,
                       " is the file being imported: name another for --rejects, -o "
                       "and --state_file"));
    }
  }
  if (!rejects.empty() && !output.empty() && where(rejects) == where(output)) {
    return absl::InvalidArgumentError("--rejects and -o name the same file");
  }
  return absl::OkStatus();
}

PendingRow Importer::Prepare(CsvRecord record) {
  PendingRow row;
  row.record = std::move(record);
  if (!row.record.problem.empty()) {
    row.problem = row.record.problem;
    return row;
  }
  absl::StatusOr<ImportRow> parsed = ParseImportRow(header_, row.record.fields);
  if (!parsed.ok()) {
    row.problem = std::string(parsed.status().message());
    return row;
  }
  row.code = parsed->code;
  if (!parsed->skip.empty()) {
    row.skipped = true;
    return row;
  }
  v1::ShortenRequest& request = parsed->request;
  for (const auto& [key, value] : extra_labels_) request.mutable_labels()->insert({key, value});
  request.set_force_new(options_.shorten.force_new);
  const std::string request_id = RowRequestId(request, row.code);
  request.set_request_id(request_id);
  if (!row.code.empty() && codes_ != CodePolicy::kNew) {
    if (codec::HasAliasSyntax(row.code)) {
      request.set_custom_alias(row.code);
    } else if (codes_ == CodePolicy::kKeep) {
      row.problem = absl::StrCat("code: \"", absl::CHexEscape(row.code.substr(0, 80)),
                                 "\" cannot be an alias ([A-Za-z0-9_-], 1 to 64 characters)");
      row.code_problem = true;
      return row;
    } else {
      request.set_request_id(request_id + "-new");
    }
  }
  row.request = std::move(request);
  return row;
}

void Importer::Reject(const PendingRow& row, absl::string_view reason) {
  ++counts_.rejected;
  if (rejects_.is_open()) {
    // The row as it was, less an earlier run's import_line and
    // import_error, padded to the header's width so that the two line up.
    std::vector<std::string> cells;
    for (size_t i = 0; i < std::max(row.record.fields.size(), header_.columns.size()); ++i) {
      const LinkColumn c = i < header_.columns.size() ? header_.columns[i] : LinkColumn::kIgnored;
      if (c != LinkColumn::kImportLine && c != LinkColumn::kImportError) {
        cells.push_back(i < row.record.fields.size() ? row.record.fields[i] : "");
      }
    }
    cells.push_back(absl::StrCat(row.record.line));
    cells.emplace_back(reason);
    rejects_.Write(cells);
  } else if (rejects_on_stderr_++ < kRejectsOnStderr) {
    Note(absl::StrCat("line ", row.record.line, ": ", reason));
  }
}

void Importer::Imported(const PendingRow& row, const v1::ShortenResponse& response) {
  ++(response.created() ? counts_.created : counts_.existing);
  if (!row.code.empty() && response.code() != row.code) ++counts_.new_codes;
  output_.Write({absl::StrCat(row.record.line), row.code, response.code(), response.short_url(),
                 response.link().long_url(), response.created() ? "yes" : "no"});
}

absl::Status Importer::SendAndRecord(std::vector<PendingRow>& rows) {
  std::vector<v1::ShortenRequest> requests;
  std::vector<size_t> sent;  // row index of each request
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].request.has_value()) {
      requests.push_back(*rows[i].request);
      sent.push_back(i);
    }
  }
  std::vector<v1::BatchShortenResult> results(requests.size());
  if (!requests.empty() && sender_ != nullptr) {
    SHORTENER_ASSIGN_OR_RETURN(results, sender_->Send(requests));
  }
  // --codes=keep_or_new: the codes the service would not take, again
  // without them.
  std::vector<v1::ShortenRequest> retry;
  std::vector<size_t> retried;  // index into `results`
  for (size_t k = 0; k < results.size(); ++k) {
    if (codes_ == CodePolicy::kKeepOrNew && IsCodeRefusal(results[k])) {
      v1::ShortenRequest again = requests[k];
      again.clear_custom_alias();
      again.set_request_id(again.request_id() + "-new");
      retry.push_back(std::move(again));
      retried.push_back(k);
    }
  }
  if (!retry.empty()) {
    SHORTENER_ASSIGN_OR_RETURN(std::vector<v1::BatchShortenResult> second, sender_->Send(retry));
    for (size_t j = 0; j < retried.size(); ++j) results[retried[j]] = std::move(second[j]);
  }
  for (size_t k = 0; k < results.size(); ++k) {
    PendingRow& row = rows[sent[k]];
    if (sender_ == nullptr) continue;  // --dry_run: sent nowhere, nothing to record
    if (results[k].has_response()) {
      Imported(row, results[k].response());
      continue;
    }
    row.code_problem = IsCodeRefusal(results[k]);
    row.problem = absl::StrCat(
        absl::StatusCodeToString(static_cast<absl::StatusCode>(results[k].error().code())), ": ",
        results[k].error().message());
    row.request.reset();
  }
  return absl::OkStatus();
}

absl::Status Importer::ProcessBatch(std::vector<PendingRow>& rows) {
  if (rows.empty()) return absl::OkStatus();
  SHORTENER_RETURN_IF_ERROR(SendAndRecord(rows));
  for (const PendingRow& row : rows) {
    ++counts_.rows;
    if (row.skipped) {
      ++counts_.skipped;
    } else if (!row.problem.empty()) {
      if (row.code_problem) ++counts_.code_refused;
      Reject(row, row.problem);
    }
  }
  SHORTENER_RETURN_IF_ERROR(rejects_.Flush());
  SHORTENER_RETURN_IF_ERROR(output_.Flush());
  rows.clear();
  return absl::OkStatus();
}

absl::Status Importer::SaveState(CsvPosition after) {
  resume_at_ = after;
  if (options_.transfer.dry_run) return absl::OkStatus();
  StateValues values = counts_.Values();
  values["input"] = input_id_;
  values["offset"] = absl::StrCat(after.offset);
  values["line"] = absl::StrCat(after.line);
  values["delimiter"] = absl::StrCat(static_cast<int>(separator_));
  values["rejects"] = FileKey(options_.transfer.rejects);
  values["rejects_bytes"] = absl::StrCat(rejects_.bytes());
  values["output"] = FileKey(options_.qr.output);
  values["output_bytes"] = absl::StrCat(output_.bytes());
  return ReplaceFile(state_path_, FormatStateFile(kStateKind, values));
}

std::string Importer::Summary() const {
  const int64_t imported = counts_.created + counts_.existing;
  std::string text = absl::StrCat(counts_.rows, " rows: ");
  if (options_.transfer.dry_run) {
    absl::StrAppend(&text, counts_.rows - counts_.rejected - counts_.skipped, " would be sent");
  } else {
    absl::StrAppend(&text, imported, " imported (", counts_.created, " created, ", counts_.existing,
                    " there before)");
  }
  absl::StrAppend(&text, ", ", counts_.rejected, " rejected");
  if (counts_.rejected > 0) {
    absl::StrAppend(&text, rejects_.is_open() ? absl::StrCat(" (in ", rejects_.path(), ")") : "");
  }
  if (counts_.skipped > 0)
    absl::StrAppend(&text, ", ", counts_.skipped, " skipped (revoked or expired)");
  if (counts_.new_codes > 0) absl::StrAppend(&text, ", ", counts_.new_codes, " with new codes");
  if (counts_.code_refused > 0 && codes_ == CodePolicy::kKeep) {
    absl::StrAppend(&text, "; ", counts_.code_refused,
                    " rejected for their code: --codes=keep_or_new gives them new codes");
  }
  return text;
}

int Importer::Run(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Usage(absl::StrCat("cannot open ", path));
  std::error_code size_error;
  const auto total = std::filesystem::file_size(path, size_error);
  input_id_ = InputId(in);
  CsvReader header_reader(in, {}, {}, separator_);
  absl::StatusOr<std::optional<CsvRecord>> first = header_reader.Next();
  if (!first.ok()) return Usage(absl::StrCat(path, ": ", first.status().message()));
  if (!first->has_value()) return Usage(absl::StrCat(path, " is empty: it needs a header row"));
  if (!(*first)->problem.empty()) {
    return Usage(absl::StrCat(path, ": line ", (*first)->line, ", ", (*first)->problem));
  }
  const std::vector<std::string> header = (*first)->fields;
  absl::StatusOr<std::map<std::string, std::string>> renames =
      ParseColumnRenames(options_.transfer.columns);
  if (!renames.ok()) return Usage(renames.status().message());
  absl::StatusOr<HeaderMap> mapped = MapHeader(header, *renames, options_.transfer.ignore_columns);
  if (!mapped.ok()) {
    // One column whose name holds a semicolon or a tab: another separator.
    const bool other_separator =
        header.size() == 1 && header[0].find_first_of(";\t|") != std::string::npos;
    return Usage(absl::StrCat(path, ": ", mapped.status().message(),
                              other_separator ? "; is the file separated by \";\", tabs or "
                                                "\"|\"? say so with --delimiter"
                                              : ""));
  }
  header_ = *std::move(mapped);
  absl::StatusOr<std::map<std::string, std::string>> labels = ParseLabelFlags(options_.labels);
  if (!labels.ok()) return Usage(labels.status().message());
  extra_labels_ = *std::move(labels);

  state_path_ =
      options_.transfer.state_file.empty() ? path + ".import-state" : options_.transfer.state_file;
  if (absl::Status apart = CheckFilesApart(path); !apart.ok()) return Usage(apart.message());
  resume_at_ = header_reader.position();
  bool resume = false;
  if (!options_.transfer.restart && !options_.transfer.dry_run) {
    absl::StatusOr<bool> loaded = LoadState(input_id_);
    if (!loaded.ok()) return Usage(loaded.status().message());
    resume = *loaded;
  }
  if (absl::Status opened = OpenOutputs(header); !opened.ok()) {
    io_.err << "shortenctl: " << opened.message() << "\n";
    return kExitServiceError;
  }
  if (!header_.ignored.empty()) {
    Note(absl::StrCat("import: ignoring ", header_.ignored.size(), " unknown column(s)"));
  }
  if (resume) {
    Note(absl::StrCat("import: going on from line ", resume_at_.line, " of ", path, " (",
                      counts_.rows, " rows done; --restart starts from the top)"));
  }
  if (!options_.transfer.dry_run) {
    absl::StatusOr<ShortenClient> client =
        ShortenClient::Connect(options_.service, options_.tls, options_.timeout, options_.api_key);
    if (!client.ok()) return ReportServiceError(client.status(), options_.service, io_.err);
    client_ = std::make_unique<ShortenClient>(*std::move(client));
    sender_ = std::make_unique<BatchSender>(*client_, options_.transfer.retry_backoff,
                                            [this](const std::string& line) { Note(line); });
  }
  progress_ = std::make_unique<Progress>(io_.err, options_.transfer.progress, "import", "rows",
                                         size_error ? 0 : static_cast<int64_t>(total), counts_.rows,
                                         resume_at_.offset);
  in.clear();
  in.seekg(resume_at_.offset);
  CsvReader reader(in, resume_at_, {}, separator_);
  std::vector<PendingRow> batch;
  size_t batch_bytes = 0;
  CsvPosition read_through = resume_at_;  // the end of the last record read whole
  InterruptWatch interrupt;
  for (;;) {
    absl::StatusOr<std::optional<CsvRecord>> record = reader.Next();
    const bool end = !record.ok() || !record->has_value();
    if (record.ok()) read_through = reader.position();
    if (!end) {
      batch.push_back(Prepare(**std::move(record)));
      if (batch.back().request.has_value()) batch_bytes += batch.back().request->ByteSizeLong();
    }
    const int max_items = sender_ != nullptr ? sender_->max_items() : kMaxBatchItems;
    if (end || static_cast<int>(batch.size()) >= max_items || batch_bytes >= kMaxBatchBytes ||
        interrupt.interrupted()) {
      if (absl::Status done = ProcessBatch(batch); !done.ok()) return Failed(done);
      if (absl::Status saved = SaveState(read_through); !saved.ok()) return Failed(saved);
      batch_bytes = 0;
      if (interrupt.interrupted() && !end) return Interrupted();
    }
    progress_->Update(counts_.rows + static_cast<int64_t>(batch.size()), read_through.offset);
    if (!record.ok()) {
      return Failed(
          absl::InvalidArgumentError(absl::StrCat(path, ": ", record.status().message())));
    }
    if (end) break;
  }
  progress_->Clear();
  if (!options_.transfer.dry_run) std::filesystem::remove(state_path_, size_error);
  if (rejects_on_stderr_ > kRejectsOnStderr) {
    io_.err << "shortenctl: ... and " << rejects_on_stderr_ - kRejectsOnStderr
            << " more rejected rows (--rejects=FILE keeps them all)\n";
  }
  io_.err << "shortenctl: import: " << Summary() << "\n";
  return counts_.rejected > 0 ? kExitServiceError : kExitOk;
}

}  // namespace

int RunImport(const Options& options, const std::vector<std::string>& args, Console io) {
  if (args.size() != 1 || args[0] == "-") {
    return ReportUsageError(
        "import takes one FILE (not stdin: import reads it from where an interrupted run "
        "stopped)",
        UsageLine("import"), io.err);
  }
  absl::StatusOr<CodePolicy> codes = ParseCodePolicy(options.transfer.codes);
  if (!codes.ok()) return ReportUsageError(codes.status().message(), UsageLine("import"), io.err);
  absl::StatusOr<char> separator = ParseSeparator(options.transfer.delimiter);
  if (!separator.ok()) {
    return ReportUsageError(separator.status().message(), UsageLine("import"), io.err);
  }
  return Importer(options, io, *codes, *separator).Run(args[0]);
}

}  // namespace shortener::ctl
