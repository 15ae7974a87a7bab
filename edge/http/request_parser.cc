#include "edge/http/request_parser.h"

#include <algorithm>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <cstring>
#include <limits>

namespace shortener::edge::http {
namespace {

namespace beast = boost::beast;

absl::string_view View(beast::string_view s) { return absl::string_view(s.data(), s.size()); }

// Length of " HTTP/1.1" in a request line.
constexpr size_t kVersionSuffix = 9;

constexpr absl::string_view kForwardedFor = "x-forwarded-for";
constexpr absl::string_view kPurpose = "purpose";
constexpr absl::string_view kSecPurpose = "sec-purpose";

bool NameIs(beast::string_view name, absl::string_view lower) {
  return name.size() == lower.size() &&
         beast::iequals(name, beast::string_view(lower.data(), lower.size()));
}

// The request line at the start of `bytes` without its line end, or false if
// no '\n' is in the first `limit` bytes.
bool FindRequestLine(absl::string_view bytes, size_t limit, absl::string_view* line) {
  const size_t n = std::min(bytes.size(), limit);
  const void* lf = n == 0 ? nullptr : std::memchr(bytes.data(), '\n', n);
  if (lf == nullptr) return false;
  size_t length = static_cast<size_t>(static_cast<const char*>(lf) - bytes.data());
  if (length > 0 && bytes[length - 1] == '\r') --length;
  *line = bytes.substr(0, length);
  return true;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

RequestParser::RequestParser(const ParserLimits& limits, std::string* xff_storage)
    : max_request_line_(limits.max_request_line), xff_storage_(xff_storage) {
  header_limit(static_cast<std::uint32_t>(
      std::min<size_t>(limits.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
  body_limit(static_cast<std::uint64_t>(limits.max_body_bytes));
  // Keep going into the body within one put(): a request and its small body
  // are consumed in one call.
  eager(true);
  xff_storage_->clear();
}

void RequestParser::on_request_impl(beast::http::verb, beast::string_view method_str,
                                    beast::string_view target, int version, beast::error_code& ec) {
  if (method_str.size() + 1 + target.size() + kVersionSuffix > max_request_line_) {
    // StatusForParseError turns this into 414 (the line is too long).
    ec = beast::http::error::header_limit;
    return;
  }
  method_ = View(method_str);
  target_ = View(target);
  version_ = version;
}

void RequestParser::on_field_impl(beast::http::field name, beast::string_view name_string,
                                  beast::string_view value, beast::error_code&) {
  switch (name) {
    case beast::http::field::user_agent:
      if (user_agent_.empty()) user_agent_ = View(value);
      return;
    case beast::http::field::referer:
      if (referer_.empty()) referer_ = View(value);
      return;
    case beast::http::field::unknown:
      // Beast has no enum value for these three.
      if (NameIs(name_string, kForwardedFor)) {
        AddForwardedFor(View(value));
      } else if (NameIs(name_string, kPurpose)) {
        if (purpose_.empty()) purpose_ = View(value);
      } else if (NameIs(name_string, kSecPurpose)) {
        if (sec_purpose_.empty()) sec_purpose_ = View(value);
      }
      return;
    default:
      return;
  }
}

void RequestParser::AddForwardedFor(absl::string_view value) {
  if (value.empty()) return;
  if (x_forwarded_for_.empty()) {
    x_forwarded_for_ = value;
    return;
  }
  // Repeated field: join into the storage (rarely more than once per
  // connection's lifetime, and the storage keeps its capacity).
  if (!xff_joined_) {
    xff_storage_->assign(x_forwarded_for_.data(), x_forwarded_for_.size());
    xff_joined_ = true;
  }
  xff_storage_->append(", ");
  xff_storage_->append(value.data(), value.size());
  x_forwarded_for_ = *xff_storage_;
}

void RequestParser::PinViews(std::string* storage) {
  absl::string_view* views[] = {&method_,  &target_,      &user_agent_,     &referer_,
                                &purpose_, &sec_purpose_, &x_forwarded_for_};
  const size_t count = xff_joined_ ? 6 : 7;  // a joined value is already owned
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) total += views[i]->size();
  storage->clear();
  storage->reserve(total);
  // Offsets first: the views are rebuilt once the storage stops moving.
  size_t offsets[7];
  for (size_t i = 0; i < count; ++i) {
    offsets[i] = storage->size();
    // An empty view may have a null data(): append(nullptr, 0) ends in a
    // memcpy from null, which is undefined.
    if (!views[i]->empty()) storage->append(views[i]->data(), views[i]->size());
  }
  for (size_t i = 0; i < count; ++i) {
    *views[i] = absl::string_view(storage->data() + offsets[i], views[i]->size());
  }
}

bool RequestLineTooLong(absl::string_view pending, size_t max_request_line) {
  // A line of at most max_request_line bytes has its '\n' at index
  // max_request_line + 1 at the latest.
  const size_t window = max_request_line + 2;
  if (pending.size() < window) return false;
  absl::string_view line;
  return !FindRequestLine(pending, window, &line);
}

int StatusForParseError(const beast::error_code& ec, absl::string_view request_bytes,
                        size_t max_request_line) {
  using error = beast::http::error;
  absl::string_view line;
  if (ec == error::body_limit) return 413;
  if (ec == error::header_limit) {
    if (!FindRequestLine(request_bytes, request_bytes.size(), &line)) return 414;
    return line.size() > max_request_line ? 414 : 431;
  }
  if (ec == error::bad_version && FindRequestLine(request_bytes, request_bytes.size(), &line)) {
    // "... HTTP/d.d" naming a version other than 1.0/1.1: the version
    // itself is what Beast refused. With 1.0/1.1 the line end was bad: 400.
    constexpr absl::string_view kPrefix = " HTTP/";
    if (line.size() >= kPrefix.size() + 3) {
      const absl::string_view tail = line.substr(line.size() - kPrefix.size() - 3);
      const char major = tail[kPrefix.size()];
      const char minor = tail[kPrefix.size() + 2];
      const bool supported = major == '1' && (minor == '0' || minor == '1');
      if (tail.substr(0, kPrefix.size()) == kPrefix && IsDigit(major) &&
          tail[kPrefix.size() + 1] == '.' && IsDigit(minor) && !supported) {
        return 505;
      }
    }
  }
  return 400;
}

}  // namespace shortener::edge::http
