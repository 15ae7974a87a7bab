// Fuzzes services/shortenctl/csv.h: CsvReader, which reads the files
// `shortenctl import` is given (another shortener's export, a spreadsheet),
// and FormatCsvRecord.
//
// Input: byte 0 picks the limits (field 1-16 bytes or the default, record
// up to 4x that, 1-8 fields or the default) and the separator (comma or
// semicolon); the rest is the file.
// Invariants, besides no memory error or UB:
//  - the only error is INVALID_ARGUMENT "line N, column C: quoted field not
//    closed before the end of the input", and it is returned again after;
//  - every record has 1 to max_fields fields within the field and record
//    limits, starts on a later line than the one before, and its problem is
//    empty or names a column ("column C: ...");
//  - positions only move forward and never past the input;
//  - a record without a problem, written with FormatCsvRecord (no guard),
//    reads back as the same fields;
//  - a reader started at a record's end position (as import resumes) reads
//    the same next record.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "services/shortenctl/csv.h"
#include "tests/fuzz/fuzz_check.h"

namespace shortener::ctl {
namespace {

CsvLimits LimitsOf(uint8_t b) {
  CsvLimits limits;
  if (b & 0x80) return limits;
  limits.max_field_bytes = 1 + (b & 0x0f);
  limits.max_record_bytes = limits.max_field_bytes * (1 + ((b >> 4) & 0x03));
  limits.max_fields = 1 + ((b >> 2) & 0x07);
  return limits;
}

void CheckRecord(const CsvRecord& record, const CsvLimits& limits) {
  FUZZ_CHECK(!record.fields.empty() && record.fields.size() <= limits.max_fields);
  size_t bytes = 0;
  for (const std::string& field : record.fields) {
    FUZZ_CHECK(field.size() <= limits.max_field_bytes);
    bytes += field.size();
  }
  FUZZ_CHECK(bytes <= limits.max_record_bytes);
  FUZZ_CHECK(record.problem.empty() || absl::StartsWith(record.problem, "column "));
}

void CheckRoundTrip(const CsvRecord& record, const CsvLimits& limits, char separator) {
  std::istringstream in(FormatCsvRecord(record.fields, /*guard=*/false, separator));
  CsvLimits generous = limits;
  generous.max_field_bytes = generous.max_record_bytes = 1 << 20;
  CsvReader reader(in, {}, generous, separator);
  absl::StatusOr<std::optional<CsvRecord>> again = reader.Next();
  FUZZ_CHECK(again.ok() && again->has_value());
  FUZZ_CHECK((*again)->fields == record.fields);
  FUZZ_CHECK((*again)->problem.empty());
  absl::StatusOr<std::optional<CsvRecord>> end = reader.Next();
  FUZZ_CHECK(end.ok() && !end->has_value());
}

// A reader started at `at` reads `expected` next (or the end).
void CheckResume(const std::string& text, CsvPosition at, const CsvLimits& limits, char separator,
                 const absl::StatusOr<std::optional<CsvRecord>>& expected) {
  std::istringstream in(text);
  in.seekg(at.offset);
  CsvReader reader(in, at, limits, separator);
  absl::StatusOr<std::optional<CsvRecord>> next = reader.Next();
  FUZZ_CHECK(next.ok() == expected.ok());
  if (!next.ok()) {
    FUZZ_CHECK(next.status() == expected.status());
    return;
  }
  FUZZ_CHECK(next->has_value() == expected->has_value());
  if (next->has_value()) {
    FUZZ_CHECK((*next)->fields == (*expected)->fields);
    FUZZ_CHECK((*next)->line == (*expected)->line);
    FUZZ_CHECK((*next)->problem == (*expected)->problem);
  }
}

void FuzzOne(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const CsvLimits limits = LimitsOf(data[0]);
  const char separator = (data[0] & 0x40) != 0 ? ';' : ',';
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::istringstream in(text);
  CsvReader reader(in, {}, limits, separator);
  int64_t last_line = 0;
  CsvPosition last = reader.position();
  bool checked_resume = false;
  for (size_t records = 0;; ++records) {
    FUZZ_CHECK(records <= text.size());
    absl::StatusOr<std::optional<CsvRecord>> next = reader.Next();
    if (!checked_resume && last.offset > 0) {
      CheckResume(text, last, limits, separator, next);
      checked_resume = true;
    }
    if (!next.ok()) {
      FUZZ_CHECK(next.status().code() == absl::StatusCode::kInvalidArgument);
      FUZZ_CHECK(absl::StartsWith(next.status().message(), "line "));
      FUZZ_CHECK(absl::EndsWith(next.status().message(),
                                ": quoted field not closed before the end of the input"));
      FUZZ_CHECK(reader.Next().status() == next.status());
      return;
    }
    if (!next->has_value()) {
      FUZZ_CHECK(reader.position().offset == static_cast<int64_t>(text.size()));
      return;
    }
    const CsvRecord& record = **next;
    CheckRecord(record, limits);
    FUZZ_CHECK(record.line > last_line);
    last_line = record.line;
    const CsvPosition now = reader.position();
    FUZZ_CHECK(now.offset > last.offset && now.offset <= static_cast<int64_t>(text.size()));
    FUZZ_CHECK(now.line >= record.line);
    last = now;
    if (record.problem.empty()) CheckRoundTrip(record, limits, separator);
  }
}

}  // namespace
}  // namespace shortener::ctl

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shortener::ctl::FuzzOne(data, size);
  return 0;
}
