#include "edge/http/request_parser.h"

#include <algorithm>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <cstring>
#include <functional>
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

bool IsAllDigits(absl::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return IsDigit(c); });
}

bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// RFC 3986 unreserved / sub-delims.
bool IsHostChar(char c) {
  constexpr absl::string_view kPunctuation = "-._~!$&'()*+,;=";
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) ||
         kPunctuation.find(c) != absl::string_view::npos;
}

// reg-name / IPv4address: *( unreserved / pct-encoded / sub-delims ).
bool IsRegName(absl::string_view name) {
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '%') {
      if (i + 2 >= name.size() || !IsHexDigit(name[i + 1]) || !IsHexDigit(name[i + 2])) {
        return false;
      }
      i += 2;
    } else if (!IsHostChar(name[i])) {
      return false;
    }
  }
  return true;
}

void Assign(std::string& to, beast::string_view from) { to.assign(from.data(), from.size()); }

}  // namespace

void RequestHead::Clear() {
  method.clear();
  target.clear();
  x_forwarded_for.clear();
  user_agent.clear();
  referer.clear();
  purpose.clear();
  sec_purpose.clear();
  authorization.clear();
  content_type.clear();
  body.clear();
  expect_continue = false;
}

size_t RequestHead::Capacity() const {
  return method.capacity() + target.capacity() + x_forwarded_for.capacity() +
         user_agent.capacity() + referer.capacity() + purpose.capacity() + sec_purpose.capacity() +
         authorization.capacity() + content_type.capacity() + body.capacity();
}

size_t RequestHead::LargestCapacity() const {
  return std::max({method.capacity(), target.capacity(), x_forwarded_for.capacity(),
                   user_agent.capacity(), referer.capacity(), purpose.capacity(),
                   sec_purpose.capacity(), authorization.capacity(), content_type.capacity(),
                   body.capacity()});
}

void RequestHead::Release(size_t keep) {
  for (std::string* s : {&method, &target, &x_forwarded_for, &user_agent, &referer, &purpose,
                         &sec_purpose, &authorization, &content_type, &body}) {
    if (s->capacity() > keep) std::string().swap(*s);
  }
}

RequestParser::RequestParser(const ParserLimits& limits, RequestHead* head)
    : max_request_line_(limits.max_request_line),
      max_header_fields_(limits.max_header_fields),
      keep_body_(limits.keep_body),
      head_(head) {
  header_limit(static_cast<std::uint32_t>(
      std::min<size_t>(limits.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
  body_limit(static_cast<std::uint64_t>(limits.max_body_bytes));
  // Keep going into the body within one put(): a request and its small body
  // are consumed in one call.
  eager(true);
  head_->Clear();
}

size_t RequestParser::Put(absl::string_view bytes, beast::error_code& ec) {
  input_begin_ = bytes.data();
  input_end_ = bytes.data() + bytes.size();
  return put(boost::asio::const_buffer(bytes.data(), bytes.size()), ec);
}

RequestRefusal RequestParser::RefusalFor(const beast::error_code& ec,
                                         absl::string_view request_bytes) const {
  if (refusal_.has_value()) return *refusal_;
  return RefusalForParseError(ec, request_bytes, max_request_line_);
}

void RequestParser::Refuse(RequestRefusal refusal, beast::error_code& ec) {
  refusal_ = refusal;
  ec = beast::http::error::bad_value;  // any error but need_more stops Beast
}

void RequestParser::on_request_impl(beast::http::verb, beast::string_view method_str,
                                    beast::string_view target, int version, beast::error_code& ec) {
  if (method_str.size() + 1 + target.size() + kVersionSuffix > max_request_line_) {
    return Refuse(RequestRefusal::kLineTooLong, ec);
  }
  Assign(head_->method, method_str);
  Assign(head_->target, target);
  version_ = version;
}

bool RequestParser::Folded(const char* colon, beast::string_view value) const {
  // Unfolded, the value lies in the bytes given to put(), after the colon
  // and optional whitespace only. Folded, Beast either joins the lines into
  // a buffer of its own or, when the first lines are empty, points past the
  // fold's CRLF. (std::less: the pointers may be into different objects.)
  const std::less<const char*> before;
  if (before(value.data(), colon + 1) || before(input_end_, value.data() + value.size())) {
    return true;
  }
  for (const char* p = colon + 1; p != value.data(); ++p) {
    if (*p != ' ' && *p != '\t') return true;
  }
  return false;
}

void RequestParser::on_field_impl(beast::http::field name, beast::string_view name_string,
                                  beast::string_view value, beast::error_code& ec) {
  // Beast has already checked the field's syntax (token name, no control
  // character but HTAB in the value) and, for Content-Length and
  // Transfer-Encoding, its own consistency rules.
  if (++fields_ > max_header_fields_) return Refuse(RequestRefusal::kTooManyFields, ec);
  if (Folded(name_string.data() + name_string.size(), value)) {
    return Refuse(RequestRefusal::kObsFold, ec);
  }
  switch (name) {
    case beast::http::field::transfer_encoding:
      // RFC 9112 would have 501 for a coding we do not know and a chunked
      // body read; the edge takes no bodies at all, and refusing outright is
      // what keeps a proxy in front that reads the body differently (a
      // Content-Length next to it, "chunked, identity", a folded value) from
      // sending us a second, hidden request.
      return Refuse(RequestRefusal::kTransferEncoding, ec);
    case beast::http::field::content_length:
      // Beast accepts "5, 5" and repeated equal values; a proxy may not.
      if (++content_length_fields_ > 1 || value.empty() || !IsAllDigits(View(value))) {
        return Refuse(RequestRefusal::kContentLength, ec);
      }
      return;
    case beast::http::field::host:
      if (++host_fields_ > 1 || !IsValidHostValue(View(value))) {
        return Refuse(RequestRefusal::kHost, ec);
      }
      return;
    case beast::http::field::user_agent:
      if (head_->user_agent.empty()) Assign(head_->user_agent, value);
      return;
    case beast::http::field::referer:
      if (head_->referer.empty()) Assign(head_->referer, value);
      return;
    case beast::http::field::authorization:
      if (!head_->authorization.empty()) head_->authorization.append(", ");
      head_->authorization.append(value.data(), value.size());
      return;
    case beast::http::field::content_type:
      if (head_->content_type.empty()) Assign(head_->content_type, value);
      return;
    case beast::http::field::expect:
      if (beast::iequals(value, "100-continue")) head_->expect_continue = true;
      return;
    case beast::http::field::unknown:
      // Beast has no enum value for these three.
      if (NameIs(name_string, kForwardedFor)) {
        if (value.empty()) return;
        if (!head_->x_forwarded_for.empty()) head_->x_forwarded_for.append(", ");
        head_->x_forwarded_for.append(value.data(), value.size());
      } else if (NameIs(name_string, kPurpose)) {
        if (head_->purpose.empty()) Assign(head_->purpose, value);
      } else if (NameIs(name_string, kSecPurpose)) {
        if (head_->sec_purpose.empty()) Assign(head_->sec_purpose, value);
      }
      return;
    default:
      return;
  }
}

void RequestParser::on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                                      beast::error_code&) {
  // Beast has checked the length against body_limit (max_body_bytes)
  // already: reserving it is bounded.
  if (keep_body_ && content_length) head_->body.reserve(static_cast<size_t>(*content_length));
}

size_t RequestParser::on_body_impl(beast::string_view body, beast::error_code&) {
  if (keep_body_) head_->body.append(body.data(), body.size());
  return body.size();  // otherwise discarded
}

void RequestParser::on_header_impl(beast::error_code& ec) {
  // RFC 9112 section 3.2: a server MUST answer 400 to an HTTP/1.1 request
  // without Host.
  if (version_ == 11 && host_fields_ == 0) Refuse(RequestRefusal::kHost, ec);
}

bool RequestLineTooLong(absl::string_view pending, size_t max_request_line) {
  // A line of at most max_request_line bytes has its '\n' at index
  // max_request_line + 1 at the latest.
  const size_t window = max_request_line + 2;
  if (pending.size() < window) return false;
  absl::string_view line;
  return !FindRequestLine(pending, window, &line);
}

RequestRefusal RefusalForParseError(const beast::error_code& ec, absl::string_view request_bytes,
                                    size_t max_request_line) {
  using error = beast::http::error;
  absl::string_view line;
  if (ec == error::body_limit) return RequestRefusal::kBodyTooLarge;
  if (ec == error::bad_content_length || ec == error::multiple_content_length) {
    return RequestRefusal::kContentLength;
  }
  if (ec == error::bad_transfer_encoding) return RequestRefusal::kTransferEncoding;
  if (ec == error::header_limit) {
    if (!FindRequestLine(request_bytes, request_bytes.size(), &line)) {
      return RequestRefusal::kLineTooLong;
    }
    return line.size() > max_request_line ? RequestRefusal::kLineTooLong
                                          : RequestRefusal::kHeadTooLarge;
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
        return RequestRefusal::kVersion;
      }
    }
  }
  return RequestRefusal::kMalformed;
}

bool IsValidHostValue(absl::string_view host) {
  absl::string_view port;
  if (!host.empty() && host.front() == '[') {
    // IP-literal: "[" ( IPv6address / IPvFuture ) "]", checked by alphabet.
    const size_t close = host.find(']');
    if (close == absl::string_view::npos || close == 1) return false;
    for (char c : host.substr(1, close - 1)) {
      if (c != ':' && !IsHostChar(c)) return false;
    }
    port = host.substr(close + 1);
  } else {
    const size_t colon = host.find(':');
    if (!IsRegName(host.substr(0, colon))) return false;
    port = colon == absl::string_view::npos ? absl::string_view() : host.substr(colon);
  }
  if (port.empty()) return true;
  return port.front() == ':' && IsAllDigits(port.substr(1));
}

absl::string_view RequestRefusalName(RequestRefusal refusal) {
  switch (refusal) {
    case RequestRefusal::kMalformed:
      return "malformed";
    case RequestRefusal::kObsFold:
      return "obs_fold";
    case RequestRefusal::kTransferEncoding:
      return "transfer_encoding";
    case RequestRefusal::kContentLength:
      return "content_length";
    case RequestRefusal::kHost:
      return "host";
    case RequestRefusal::kBodyTooLarge:
      return "body_too_large";
    case RequestRefusal::kLineTooLong:
      return "line_too_long";
    case RequestRefusal::kHeadTooLarge:
      return "head_too_large";
    case RequestRefusal::kTooManyFields:
      return "too_many_fields";
    case RequestRefusal::kVersion:
      return "version";
  }
  return "malformed";
}

}  // namespace shortener::edge::http
