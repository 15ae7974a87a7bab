#include "services/shortenctl/transfer_state.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "services/shortenctl/csv.h"

namespace shortener::ctl {
namespace {

std::string FirstLine(absl::string_view kind) {
  return absl::StrCat("shortenctl ", kind, " state 1");
}

}  // namespace

std::string FormatStateFile(absl::string_view kind, const StateValues& values) {
  std::string text = absl::StrCat(FirstLine(kind), "\n");
  for (const auto& [key, value] : values) absl::StrAppend(&text, key, " ", value, "\n");
  return text;
}

absl::StatusOr<StateValues> ParseStateFile(absl::string_view kind, absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  if (lines.empty() || lines[0] != FirstLine(kind)) {
    return absl::InvalidArgumentError(absl::StrCat("not a shortenctl ", kind, " state file"));
  }
  StateValues values;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::pair<std::string, std::string> entry = absl::StrSplit(lines[i], absl::MaxSplits(' ', 1));
    values[entry.first] = entry.second;
  }
  return values;
}

absl::StatusOr<int64_t> StateNumber(const StateValues& values, absl::string_view key) {
  auto it = values.find(std::string(key));
  int64_t n = 0;
  if (it == values.end() || !absl::SimpleAtoi(it->second, &n) || n < 0) {
    return absl::InvalidArgumentError(absl::StrCat("state file: no number ", key));
  }
  return n;
}

absl::Status CsvOutputFile::Open(const std::string& path, const std::vector<std::string>& header,
                                 std::optional<int64_t> resume_size, char separator) {
  path_ = path;
  separator_ = separator;
  if (resume_size.has_value()) {
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    if (error) {
      return absl::InternalError(absl::StrCat("cannot go on writing ", path,
                                              ": it is gone (the state file says it had ",
                                              *resume_size, " bytes)"));
    }
    if (static_cast<int64_t>(size) < *resume_size) {
      return absl::InternalError(absl::StrCat("cannot go on writing ", path, ": it has ", size,
                                              " bytes, the state file says ", *resume_size));
    }
    std::filesystem::resize_file(path, static_cast<uintmax_t>(*resume_size), error);
    if (error) return absl::InternalError(absl::StrCat("cannot cut ", path, ": ", error.message()));
    out_.open(path, std::ios::binary | std::ios::app);
    bytes_ = *resume_size;
  } else {
    out_.open(path, std::ios::binary | std::ios::trunc);
    bytes_ = 0;
  }
  if (!out_) {
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  if (!resume_size.has_value()) Write(header);
  return absl::OkStatus();
}

void CsvOutputFile::Write(const std::vector<std::string>& cells) {
  if (!out_.is_open()) return;
  const std::string record = FormatCsvRecord(cells, /*guard=*/true, separator_);
  out_ << record;
  bytes_ += static_cast<int64_t>(record.size());
}

absl::Status CsvOutputFile::Flush() {
  if (!out_.is_open()) return absl::OkStatus();
  out_.flush();
  if (!out_) return absl::InternalError(absl::StrCat("cannot write ", path_));
  return absl::OkStatus();
}

absl::Status CsvOutputFile::Close() {
  if (!out_.is_open()) return absl::OkStatus();
  out_.close();
  if (!out_) return absl::InternalError(absl::StrCat("cannot write ", path_));
  return absl::OkStatus();
}

}  // namespace shortener::ctl
