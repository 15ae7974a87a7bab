// The progress line of import and export on a terminal:
//   import [#######.............]  35%  412 000 rows  8 200 rows/s  ETA 1m12s
// (export, whose total is unknown, shows links and their rate alone). It
// is redrawn in place (CR, erase to the end of the line) at most five
// times a second, and only when enabled: shortenctl enables it when stderr
// is a terminal, so logs and pipes get the summary lines alone.
// Not thread-safe: one Progress per command run.
#ifndef SHORTENER_SERVICES_SHORTENCTL_PROGRESS_H_
#define SHORTENER_SERVICES_SHORTENCTL_PROGRESS_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace shortener::ctl {

// What the line shows at one moment.
struct ProgressState {
  absl::string_view verb;   // "import"
  absl::string_view noun;   // "rows"
  int64_t items = 0;        // done, in total
  int64_t bytes = 0;        // of the input read, in total
  int64_t total_bytes = 0;  // 0: unknown (no bar, no ETA)
  // Since this run started (a resumed run counts only its own part for
  // the rate and the ETA).
  int64_t run_items = 0;
  int64_t run_bytes = 0;
  absl::Duration elapsed;
};

// The line for `state`, without CR or line end. Pure.
std::string RenderProgress(const ProgressState& state);

class Progress {
 public:
  // Draws on `err` only when `enabled`. `start_items` and `start_bytes`:
  // what an earlier run did already.
  Progress(std::ostream& err, bool enabled, absl::string_view verb, absl::string_view noun,
           int64_t total_bytes, int64_t start_items = 0, int64_t start_bytes = 0);

  // Records the totals so far; redraws when the last draw is 200 ms old.
  void Update(int64_t items, int64_t bytes);

  // Erases the line, so that a message can be printed; the next Update
  // draws it again.
  void Clear();

 private:
  std::ostream& err_;
  bool enabled_;
  ProgressState state_;
  int64_t start_items_;
  int64_t start_bytes_;
  absl::Time start_;
  absl::Time last_draw_ = absl::InfinitePast();
  bool drawn_ = false;
};

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_PROGRESS_H_
