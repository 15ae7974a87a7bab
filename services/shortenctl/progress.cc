#include "services/shortenctl/progress.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace shortener::ctl {
namespace {

constexpr int kBarWidth = 20;
constexpr absl::Duration kRedrawEvery = absl::Milliseconds(200);

// "1h02m", "3m07s", "12s".
std::string ShortDuration(absl::Duration d) {
  const int64_t s = absl::ToInt64Seconds(d);
  if (s >= 3600) return absl::StrFormat("%dh%02dm", s / 3600, s / 60 % 60);
  if (s >= 60) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%ds", s);
}

// 412000 -> "412 000".
std::string Grouped(int64_t n) {
  std::string digits = absl::StrCat(n);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0 && digits[i - 1] != '-'; i -= 3) {
    digits.insert(static_cast<size_t>(i), " ");
  }
  return digits;
}

}  // namespace

std::string RenderProgress(const ProgressState& state) {
  std::string line(state.verb);
  if (state.total_bytes > 0) {
    const double done = std::clamp(static_cast<double>(state.bytes) / state.total_bytes, 0.0, 1.0);
    const int filled = static_cast<int>(done * kBarWidth);
    absl::StrAppendFormat(&line, " [%s%s] %3d%%", std::string(filled, '#'),
                          std::string(kBarWidth - filled, '.'), static_cast<int>(done * 100));
  }
  absl::StrAppend(&line, "  ", Grouped(state.items), " ", state.noun);
  const double seconds = absl::ToDoubleSeconds(state.elapsed);
  if (seconds >= 1 && state.run_items > 0) {
    absl::StrAppend(&line, "  ", Grouped(static_cast<int64_t>(state.run_items / seconds)), " ",
                    state.noun, "/s");
  }
  if (seconds >= 1 && state.total_bytes > 0 && state.run_bytes > 0) {
    const double left = static_cast<double>(std::max<int64_t>(0, state.total_bytes - state.bytes));
    absl::StrAppend(&line, "  ETA ",
                    ShortDuration(absl::Seconds(seconds * left / state.run_bytes)));
  }
  return line;
}

Progress::Progress(std::ostream& err, bool enabled, absl::string_view verb, absl::string_view noun,
                   int64_t total_bytes, int64_t start_items, int64_t start_bytes)
    : err_(err),
      enabled_(enabled),
      start_items_(start_items),
      start_bytes_(start_bytes),
      start_(absl::Now()) {
  state_.verb = verb;
  state_.noun = noun;
  state_.total_bytes = total_bytes;
  state_.items = start_items;
  state_.bytes = start_bytes;
}

void Progress::Update(int64_t items, int64_t bytes) {
  if (!enabled_) return;
  const absl::Time now = absl::Now();
  if (now - last_draw_ < kRedrawEvery) return;
  last_draw_ = now;
  state_.items = items;
  state_.bytes = bytes;
  state_.run_items = items - start_items_;
  state_.run_bytes = bytes - start_bytes_;
  state_.elapsed = now - start_;
  err_ << "\r" << RenderProgress(state_) << "\x1b[K" << std::flush;
  drawn_ = true;
}

void Progress::Clear() {
  if (!drawn_) return;
  err_ << "\r\x1b[K" << std::flush;
  drawn_ = false;
  last_draw_ = absl::InfinitePast();
}

}  // namespace shortener::ctl
