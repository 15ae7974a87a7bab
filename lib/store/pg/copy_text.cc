#include "lib/store/pg/copy_text.h"

#include <pqxx/tablewriter>
#include <utility>

#include "absl/strings/numbers.h"
#include "lib/store/pg/pg_arrays.h"

namespace shortener::store {

void CopyText::Separate() {
  if (row_open_) data_.push_back('\t');
  row_open_ = true;
}

CopyText& CopyText::Text(absl::string_view text) {
  Separate();
  // Runs of ordinary bytes are appended whole; URLs rarely hold any of the
  // four escaped bytes.
  size_t run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char escaped;
    switch (text[i]) {
      case '\\': escaped = '\\'; break;
      case '\t': escaped = 't'; break;
      case '\n': escaped = 'n'; break;
      case '\r': escaped = 'r'; break;
      default: continue;
    }
    data_.append(text.data() + run, i - run);
    data_.push_back('\\');
    data_.push_back(escaped);
    run = i + 1;
  }
  data_.append(text.data() + run, text.size() - run);
  return *this;
}

CopyText& CopyText::Text(const std::optional<std::string>& text) {
  return text.has_value() ? Text(absl::string_view(*text)) : Null();
}

CopyText& CopyText::Number(int64_t number) {
  Separate();
  char buffer[absl::numbers_internal::kFastToBufferSize];
  char* end = absl::numbers_internal::FastIntToBuffer(number, buffer);
  data_.append(buffer, end - buffer);
  return *this;
}

CopyText& CopyText::Number(const std::optional<int64_t>& number) {
  return number.has_value() ? Number(*number) : Null();
}

CopyText& CopyText::Time(absl::Time t) {
  Separate();
  data_ += PgTimestamp(t);  // digits, '-', ':', '.', ' ', '+': nothing to escape
  return *this;
}

CopyText& CopyText::Time(const std::optional<absl::Time>& t) {
  return t.has_value() ? Time(*t) : Null();
}

CopyText& CopyText::Bytes(absl::string_view bytes) {
  Separate();
  // bytea's hex input is \x<hex>; COPY needs its backslash doubled.
  data_ += "\\\\x";
  AppendHex(bytes, &data_);
  return *this;
}

CopyText& CopyText::Null() {
  Separate();
  data_ += "\\N";
  return *this;
}

void CopyText::EndRow() {
  data_.push_back('\n');
  row_open_ = false;
  ++rows_;
}

void CopyText::CopyTo(pqxx::transaction_base& tx, const std::string& table,
                      absl::Span<const char* const> columns) {
  std::string lines = std::move(data_);
  data_.clear();
  row_open_ = false;
  rows_ = 0;
  if (lines.empty()) return;
  lines.pop_back();  // write_raw_line appends the last row's newline itself
  // libpqxx 6.4's stream_to keeps its raw-line writer private; tablewriter,
  // deprecated in favour of stream_to, is its one public way to hand libpq
  // preformatted COPY data.
#include <pqxx/internal/ignore-deprecated-pre.hxx>
  pqxx::tablewriter out(tx, table, columns.begin(), columns.end());
#include <pqxx/internal/ignore-deprecated-post.hxx>
  out.write_raw_line(lines);
  out.complete();
}

}  // namespace shortener::store
