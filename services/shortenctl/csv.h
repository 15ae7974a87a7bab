// CSV for shortenctl: a streaming RFC 4180 reader (import) and the writing
// of cells and records (export, stats --csv, the rejects of import).
//
// Reading: fields separated by commas (or another separator: semicolons
// are what spreadsheets write in many locales, tabs), records by CRLF, LF
// or a lone CR;
// a field in double quotes may hold commas, line ends and doubled quotes
// (""); a UTF-8 byte order mark at the start of the input is skipped; blank
// lines (nothing between two line ends) are skipped. The reader never
// gives up on a record it can delimit: a stray quote inside an unquoted
// field, text after a closing quote, a field or record over its limit or
// too many fields make that record's `problem` (naming its column), and
// reading goes on with the next record. Only a quoted field still open at
// the end of the input (nothing after it can be delimited) or a read error
// stops it. Memory is bounded by CsvLimits whatever the input.
//
// Writing: a cell holding the separator, a double quote, CR or LF (or
// starting with a byte order mark) is quoted (quotes doubled); CsvCell also guards against formula
// injection: a value that starts with = + - @ TAB or CR gets a leading single quote, so that a
// spreadsheet shows it as text (StripFormulaGuard undoes it on import). Records end in CRLF.
//
// Functions are pure and thread-safe; a CsvReader is used by one thread.
#ifndef SHORTENER_SERVICES_SHORTENCTL_CSV_H_
#define SHORTENER_SERVICES_SHORTENCTL_CSV_H_

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::ctl {

struct CsvLimits {
  size_t max_field_bytes = 16 * 1024;   // one field; default 16 KiB
  size_t max_record_bytes = 64 * 1024;  // all fields of a record; default 64 KiB
  size_t max_fields = 64;               // fields of a record; default 64
};

// Where reading starts or stands: the byte offset in the input and the
// (1-based) line number there.
struct CsvPosition {
  int64_t offset = 0;
  int64_t line = 1;
};

struct CsvRecord {
  std::vector<std::string> fields;  // at least one
  int64_t line = 0;                 // the line the record starts on
  // Empty, or why the record is not usable as read: "column 3: a quote
  // inside an unquoted field (quote the whole field and double the
  // quote)". Fields over a limit are cut (and fields past max_fields
  // dropped).
  std::string problem;
};

class CsvReader {
 public:
  // Reads `in` from its current position, which is `start` (a BOM is
  // skipped only at offset 0), fields separated by `separator` (not a
  // quote, CR or LF). `in` must outlive the reader.
  explicit CsvReader(std::istream& in, CsvPosition start = {}, CsvLimits limits = {},
                     char separator = ',');

  // The next record, or nullopt at the end of the input. INVALID_ARGUMENT
  // "line N, column C: quoted field not closed before the end of the
  // input" (N the line the field starts on); DATA_LOSS when the stream
  // fails to read. After an error every call returns it again.
  absl::StatusOr<std::optional<CsvRecord>> Next();

  // The position right after the last record returned (its line end
  // included): where a reader started later goes on from.
  CsvPosition position() const { return {offset_, line_}; }

 private:
  int Get();   // the next byte (0-255) consumed, or -1 at the end
  int Peek();  // the next byte without consuming it, or -1
  bool Fill();
  // Consumes the line end that starts with `c` ('\r' or '\n'), counting it.
  void EndLine(int c);

  std::istream& in_;
  CsvLimits limits_;
  char separator_;
  std::string buffer_;
  size_t chunk_ = 0;  // bytes the last read asked for
  size_t pos_ = 0;
  int64_t offset_ = 0;
  int64_t line_ = 1;
  bool eof_ = false;
  absl::Status error_;
};

// `text` quoted if it holds `separator`, a double quote, CR or LF, or
// starts with a byte order mark.
std::string CsvQuote(absl::string_view text, char separator = ',');

// `text` guarded against formula injection (see above), then CsvQuote'd.
std::string CsvCell(absl::string_view text, char separator = ',');

// A cell as CsvCell wrote it, back to the value: a leading single quote
// before = + - @ TAB or CR is dropped (the quoting itself is the reader's).
absl::string_view StripFormulaGuard(absl::string_view cell);

// One record: the cells, each CsvCell'd (CsvQuote'd when `guard` is
// false), separated by `separator`, ending in CRLF. A record of one empty cell is
// written `""` so that it is not read back as a blank line.
std::string FormatCsvRecord(const std::vector<std::string>& cells, bool guard = true,
                            char separator = ',');

// The separator a --delimiter value names: "," (also empty), ";", "tab"
// (or a TAB), "|". INVALID_ARGUMENT naming --delimiter otherwise.
absl::StatusOr<char> ParseSeparator(absl::string_view text);

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_CSV_H_
