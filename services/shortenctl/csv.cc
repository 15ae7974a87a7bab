#include "services/shortenctl/csv.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace shortener::ctl {
namespace {

// Reads start small (a reader per short text costs little) and double up
// to the largest.
constexpr size_t kFirstChunkBytes = 4 * 1024;
constexpr size_t kChunkBytes = 64 * 1024;
constexpr absl::string_view kByteOrderMark = "\xEF\xBB\xBF";
constexpr absl::string_view kLineEnd = "\r\n";

// Characters that make a spreadsheet read a cell as a formula (OWASP's CSV
// injection list).
bool StartsLikeFormula(absl::string_view text) {
  return !text.empty() && (text[0] == '=' || text[0] == '+' || text[0] == '-' || text[0] == '@' ||
                           text[0] == '\t' || text[0] == '\r');
}

// One record being read: its fields so far, the field being read, and the
// first problem. Appends respect the limits.
class RecordBuilder {
 public:
  RecordBuilder(const CsvLimits& limits, int64_t line) : limits_(limits) { record_.line = line; }

  void Append(char c) {
    if (field_.size() >= limits_.max_field_bytes) {
      Problem(absl::StrCat("field longer than ", limits_.max_field_bytes, " bytes"));
    } else if (record_bytes_ >= limits_.max_record_bytes) {
      Problem(absl::StrCat("record longer than ", limits_.max_record_bytes, " bytes"));
    } else {
      field_.push_back(c);
      ++record_bytes_;
    }
  }

  void EndField() {
    if (record_.fields.size() < limits_.max_fields) {
      record_.fields.push_back(std::move(field_));
    } else {
      Problem(absl::StrCat("more than ", limits_.max_fields, " fields"));
    }
    field_.clear();
    ++column_;
  }

  // Keeps the first problem only: later ones are often its echoes.
  void Problem(absl::string_view text) {
    if (record_.problem.empty()) record_.problem = absl::StrCat("column ", column_, ": ", text);
  }

  size_t column() const { return column_; }
  CsvRecord Take() { return std::move(record_); }

 private:
  const CsvLimits& limits_;
  CsvRecord record_;
  std::string field_;
  size_t record_bytes_ = 0;
  size_t column_ = 1;
};

}  // namespace

CsvReader::CsvReader(std::istream& in, CsvPosition start, CsvLimits limits, char separator)
    : in_(in), limits_(limits), separator_(separator), offset_(start.offset), line_(start.line) {
  if (start.offset == 0 && Fill() &&
      absl::string_view(buffer_).substr(0, kByteOrderMark.size()) == kByteOrderMark) {
    pos_ += kByteOrderMark.size();
    offset_ += static_cast<int64_t>(kByteOrderMark.size());
  }
}

bool CsvReader::Fill() {
  if (pos_ < buffer_.size()) return true;
  if (eof_) return false;
  chunk_ = chunk_ == 0 ? kFirstChunkBytes : std::min(2 * chunk_, kChunkBytes);
  buffer_.resize(chunk_);
  in_.read(buffer_.data(), static_cast<std::streamsize>(chunk_));
  buffer_.resize(static_cast<size_t>(in_.gcount()));
  pos_ = 0;
  if (buffer_.empty()) {
    eof_ = true;
    if (in_.bad()) error_ = absl::DataLossError(absl::StrCat("cannot read past byte ", offset_));
    return false;
  }
  return true;
}

int CsvReader::Get() {
  if (!Fill()) return -1;
  ++offset_;
  return static_cast<unsigned char>(buffer_[pos_++]);
}

int CsvReader::Peek() { return Fill() ? static_cast<unsigned char>(buffer_[pos_]) : -1; }

void CsvReader::EndLine(int c) {
  if (c == '\r' && Peek() == '\n') Get();
  ++line_;
}

absl::StatusOr<std::optional<CsvRecord>> CsvReader::Next() {
  if (!error_.ok()) return error_;
  for (int c = Peek(); c == '\r' || c == '\n'; c = Peek()) EndLine(Get());  // blank lines
  if (Peek() < 0) {
    if (!error_.ok()) return error_;
    return std::nullopt;
  }
  RecordBuilder record(limits_, line_);
  enum class State { kFieldStart, kUnquoted, kQuoted, kAfterQuote };
  State state = State::kFieldStart;
  int64_t quote_line = 0;
  for (;;) {
    const int c = Get();
    if (state == State::kQuoted) {
      if (c < 0) {
        if (error_.ok()) {
          error_ = absl::InvalidArgumentError(
              absl::StrCat("line ", quote_line, ", column ", record.column(),
                           ": quoted field not closed before the end of the input"));
        }
        return error_;
      }
      if (c == '"') {
        if (Peek() == '"') {
          Get();
          record.Append('"');
        } else {
          state = State::kAfterQuote;
        }
        continue;
      }
      if (c == '\n' || (c == '\r' && Peek() != '\n')) ++line_;
      record.Append(static_cast<char>(c));
      continue;
    }
    if (c < 0 || c == '\r' || c == '\n') {
      record.EndField();
      if (c >= 0) EndLine(c);
      break;
    }
    if (c == static_cast<unsigned char>(separator_)) {
      record.EndField();
      state = State::kFieldStart;
      continue;
    }
    if (state == State::kFieldStart && c == '"') {
      state = State::kQuoted;
      quote_line = line_;
      continue;
    }
    if (state == State::kUnquoted && c == '"') {
      record.Problem(
          "a quote inside an unquoted field (quote the whole field and double its quotes)");
    } else if (state == State::kAfterQuote) {
      record.Problem("text after the closing quote (a quote inside a quoted field is doubled)");
    }
    state = State::kUnquoted;
    record.Append(static_cast<char>(c));
  }
  if (!error_.ok()) return error_;
  return record.Take();
}

std::string CsvQuote(absl::string_view text, char separator) {
  // A leading byte order mark is quoted, or a reader takes it for the file's.
  const char special[] = {separator, '"', '\r', '\n', '\0'};
  if (text.find_first_of(special) == absl::string_view::npos &&
      !absl::StartsWith(text, kByteOrderMark)) {
    return std::string(text);
  }
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
}

std::string CsvCell(absl::string_view text, char separator) {
  return StartsLikeFormula(text) ? CsvQuote(absl::StrCat("'", text), separator)
                                 : CsvQuote(text, separator);
}

absl::string_view StripFormulaGuard(absl::string_view cell) {
  if (cell.size() >= 2 && cell[0] == '\'' && StartsLikeFormula(cell.substr(1))) {
    return cell.substr(1);
  }
  return cell;
}

std::string FormatCsvRecord(const std::vector<std::string>& cells, bool guard, char separator) {
  if (cells.empty() || (cells.size() == 1 && cells[0].empty())) {
    return absl::StrCat("\"\"", kLineEnd);
  }
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out.push_back(separator);
    absl::StrAppend(&out, guard ? CsvCell(cells[i], separator) : CsvQuote(cells[i], separator));
  }
  absl::StrAppend(&out, kLineEnd);
  return out;
}

absl::StatusOr<char> ParseSeparator(absl::string_view text) {
  if (text.empty() || text == ",") return ',';
  if (text == ";") return ';';
  if (text == "tab" || text == "\t") return '\t';
  if (text == "|") return '|';
  return absl::InvalidArgumentError(absl::StrCat(
      "--delimiter: must be \",\" (the default), \";\", tab or \"|\", got \"", text, "\""));
}

}  // namespace shortener::ctl
