// What import and export keep on disk between runs: their state files
// (a first line naming the kind, then "key value" lines) and the CSV files
// they write a batch or page at a time, whose length a state file records
// so that a resumed run cuts off whatever the interrupted one wrote after
// its last saved state.
// Not thread-safe: one command run at a time uses them.
#ifndef SHORTENER_SERVICES_SHORTENCTL_TRANSFER_STATE_H_
#define SHORTENER_SERVICES_SHORTENCTL_TRANSFER_STATE_H_

#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::ctl {

using StateValues = std::map<std::string, std::string>;

// "shortenctl <kind> state 1\n" then "key value\n" per entry (values must
// hold no line end).
std::string FormatStateFile(absl::string_view kind, const StateValues& values);

// The entries of a state file of `kind`. INVALID_ARGUMENT "not a shortenctl
// <kind> state file" for anything else.
absl::StatusOr<StateValues> ParseStateFile(absl::string_view kind, absl::string_view text);

// The integer `values` holds for `key`. INVALID_ARGUMENT naming the key
// when it is missing or not a number >= 0.
absl::StatusOr<int64_t> StateNumber(const StateValues& values, absl::string_view key);

// A CSV file written record by record that knows its length.
class CsvOutputFile {
 public:
  // Opens `path` new (truncated, `header` written), or with `resume_size`
  // cut to that many bytes and appended to; records separated by
  // `separator`. INTERNAL naming `path` when it cannot be opened, or is
  // shorter than `resume_size` (not the file the state file was written
  // with).
  absl::Status Open(const std::string& path, const std::vector<std::string>& header,
                    std::optional<int64_t> resume_size, char separator = ',');

  // Appends a record (FormatCsvRecord). Nothing when not open.
  void Write(const std::vector<std::string>& cells);

  // Hands what was written to the system. INTERNAL "cannot write PATH"
  // when a write failed (a full disk).
  absl::Status Flush();

  // Flushes and closes the file. INTERNAL "cannot write PATH" on failure.
  absl::Status Close();

  bool is_open() const { return out_.is_open(); }
  int64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  std::ofstream out_;
  std::string path_;
  char separator_ = ',';
  int64_t bytes_ = 0;
};

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_TRANSFER_STATE_H_
