#include "edge/response_builder.h"

#include <cstring>

namespace shortener::edge {
namespace {

constexpr absl::string_view kCrlf = "\r\n";
constexpr absl::string_view kContentType = "Content-Type: text/plain; charset=utf-8\r\n";

// Decimal digits of `n`.
size_t DigitCount(size_t n) {
  size_t count = 1;
  while (n >= 10) {
    n /= 10;
    ++count;
  }
  return count;
}

bool HasContentLength(const ResponsePlan& plan) { return plan.status != 204; }

// Appends pieces to a raw buffer whose size was checked beforehand.
class Cursor {
 public:
  explicit Cursor(char* dst) : start_(dst), pos_(dst) {}
  void Put(absl::string_view s) {
    // An empty view may have a null data(): memcpy from null is undefined
    // even for zero bytes.
    if (s.empty()) return;
    std::memcpy(pos_, s.data(), s.size());
    pos_ += s.size();
  }
  void PutNumber(size_t n) {
    const size_t digits = DigitCount(n);
    for (size_t i = digits; i > 0; --i) {
      pos_[i - 1] = static_cast<char>('0' + n % 10);
      n /= 10;
    }
    pos_ += digits;
  }
  size_t written() const { return static_cast<size_t>(pos_ - start_); }

 private:
  char* start_;
  char* pos_;
};

constexpr absl::string_view kStatusPrefix = "HTTP/1.1 ";
constexpr absl::string_view kDatePrefix = "Date: ";
constexpr absl::string_view kLocationPrefix = "Location: ";
constexpr absl::string_view kLengthPrefix = "Content-Length: ";
constexpr absl::string_view kKeepAlive = "Connection: keep-alive\r\n";
constexpr absl::string_view kClose = "Connection: close\r\n";

}  // namespace

absl::string_view FormatHttpDate(std::time_t time, char (&out)[kHttpDateLength]) {
  static constexpr char kDays[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr char kMonths[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::tm tm{};
  gmtime_r(&time, &tm);
  auto two = [](char* p, int v) {
    p[0] = static_cast<char>('0' + v / 10 % 10);
    p[1] = static_cast<char>('0' + v % 10);
  };
  // "Sun, 06 Nov 1994 08:49:37 GMT"
  std::memcpy(out, kDays[tm.tm_wday], 3);
  out[3] = ',';
  out[4] = ' ';
  two(out + 5, tm.tm_mday);
  out[7] = ' ';
  std::memcpy(out + 8, kMonths[tm.tm_mon], 3);
  out[11] = ' ';
  const int year = tm.tm_year + 1900;
  two(out + 12, year / 100);
  two(out + 14, year % 100);
  out[16] = ' ';
  two(out + 17, tm.tm_hour);
  out[19] = ':';
  two(out + 20, tm.tm_min);
  out[22] = ':';
  two(out + 23, tm.tm_sec);
  std::memcpy(out + 25, " GMT", 4);
  return absl::string_view(out, kHttpDateLength);
}

size_t ResponseSize(const ResponsePlan& plan, const ResponseOptions& options) {
  size_t size = kStatusPrefix.size() + 4 + plan.reason.size() + kCrlf.size();
  if (!options.date.empty()) {
    size += kDatePrefix.size() + options.date.size() + kCrlf.size();
  }
  if (!plan.location.empty()) {
    size += kLocationPrefix.size() + plan.location.size() + kCrlf.size();
  }
  size += plan.headers.size();
  if (!plan.body.empty()) size += kContentType.size();
  if (HasContentLength(plan)) {
    size += kLengthPrefix.size() + DigitCount(plan.body.size()) + kCrlf.size();
  }
  size += options.keep_alive ? kKeepAlive.size() : kClose.size();
  size += kCrlf.size();
  if (!options.head) size += plan.body.size();
  return size;
}

int AppendResponse(std::string& out, const ResponsePlan& plan, const ResponseOptions& options) {
  const size_t size = ResponseSize(plan, options);
  const size_t at = out.size();
  out.resize(at + size);
  WriteResponse(plan, options, out.data() + at, size);
  return plan.status;
}

size_t WriteResponse(const ResponsePlan& plan, const ResponseOptions& options, char* dst,
                     size_t capacity) {
  // Status codes are three digits; anything else is a caller bug that must
  // not produce a malformed status line.
  if (plan.status < 100 || plan.status > 999) return 0;
  if (ResponseSize(plan, options) > capacity) return 0;
  Cursor out(dst);
  out.Put(kStatusPrefix);
  out.PutNumber(static_cast<size_t>(plan.status));
  out.Put(" ");
  out.Put(plan.reason);
  out.Put(kCrlf);
  if (!options.date.empty()) {
    out.Put(kDatePrefix);
    out.Put(options.date);
    out.Put(kCrlf);
  }
  if (!plan.location.empty()) {
    out.Put(kLocationPrefix);
    out.Put(plan.location);
    out.Put(kCrlf);
  }
  out.Put(plan.headers);
  if (!plan.body.empty()) out.Put(kContentType);
  if (HasContentLength(plan)) {
    out.Put(kLengthPrefix);
    out.PutNumber(plan.body.size());
    out.Put(kCrlf);
  }
  out.Put(options.keep_alive ? kKeepAlive : kClose);
  out.Put(kCrlf);
  if (!options.head) out.Put(plan.body);
  return out.written();
}

absl::string_view ResponseWriter::Build(const ResponsePlan& plan, const ResponseOptions& options) {
  // resize() within capacity does not allocate; the bytes are overwritten.
  buffer_.resize(ResponseSize(plan, options));
  const size_t written = WriteResponse(plan, options, buffer_.data(), buffer_.size());
  buffer_.resize(written);
  return buffer_;
}

}  // namespace shortener::edge
