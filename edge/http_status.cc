#include "edge/http_status.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace shortener::edge {
namespace {

constexpr absl::string_view kNoStore = "Cache-Control: no-store\r\n";
constexpr absl::string_view kTemporaryRedirectCache = "Cache-Control: private, max-age=0\r\n";
constexpr absl::string_view kPermanentRedirectCache = "Cache-Control: private, max-age=300\r\n";

ResponsePlan Plain(int status, absl::string_view reason, absl::string_view body,
                   absl::string_view headers = kNoStore) {
  ResponsePlan plan;
  plan.status = status;
  plan.reason = reason;
  plan.headers = headers;
  plan.body = body;
  return plan;
}

ResponsePlan NotFound() { return Plain(404, "Not Found", "not found\n"); }
ResponsePlan Gone() { return Plain(410, "Gone", "gone\n"); }
ResponsePlan BadRequest() { return Plain(400, "Bad Request", "bad request\n"); }
ResponsePlan Unavailable(absl::string_view body) {
  return Plain(503, "Service Unavailable", body, "Cache-Control: no-store\r\nRetry-After: 1\r\n");
}
ResponsePlan BadGateway() { return Plain(502, "Bad Gateway", "bad gateway\n"); }
ResponsePlan UriTooLong() { return Plain(414, "URI Too Long", "uri too long\n"); }
ResponsePlan InternalError() { return Plain(500, "Internal Server Error", "internal error\n"); }

ResponsePlan Redirect(const ResolveResult& result, const LocationPolicy& policy) {
  if (!IsSafeLocation(result.location, policy)) return BadGateway();
  ResponsePlan plan;
  plan.status = result.redirect_status;
  plan.location = result.location;
  switch (result.redirect_status) {
    case 301:
      plan.reason = "Moved Permanently";
      plan.headers = kPermanentRedirectCache;
      return plan;
    case 302:
      plan.reason = "Found";
      plan.headers = kTemporaryRedirectCache;
      return plan;
    case 307:
      plan.reason = "Temporary Redirect";
      plan.headers = kTemporaryRedirectCache;
      return plan;
    case 308:
      plan.reason = "Permanent Redirect";
      plan.headers = kPermanentRedirectCache;
      return plan;
    default:
      return BadGateway();
  }
}

}  // namespace

LocationPolicy::LocationPolicy(std::vector<std::string> allowed_schemes)
    : schemes_(std::move(allowed_schemes)) {
  for (std::string& scheme : schemes_) absl::AsciiStrToLower(&scheme);
}

const LocationPolicy& DefaultLocationPolicy() {
  static const LocationPolicy* const kDefault = new LocationPolicy();
  return *kDefault;
}

bool IsSafeLocation(absl::string_view url, const LocationPolicy& policy) {
  if (url.empty()) return false;
  // Absolute, with an allowed scheme and a host: browsers resolve anything
  // else against the short link's own URL ("/x", "//evil.example" takes the
  // edge's scheme) or run it ("javascript:...").
  bool absolute = false;
  for (const std::string& scheme : policy.schemes_) {
    const size_t n = scheme.size();
    if (url.size() > n + 3 && url[n] == ':' && url[n + 1] == '/' && url[n + 2] == '/' &&
        absl::EqualsIgnoreCase(url.substr(0, n), scheme)) {
      const char host = url[n + 3];
      absolute = absl::ascii_isalnum(static_cast<unsigned char>(host)) || host == '[';
      break;
    }
  }
  if (!absolute) return false;
  for (char c : url) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x21 || byte > 0x7E) return false;
  }
  return true;
}

ResponsePlan PlanForOutcome(const ResolveResult& result, const LocationPolicy& policy) {
  switch (result.outcome) {
    case ResolveOutcome::kActive:
      return Redirect(result, policy);
    case ResolveOutcome::kRevoked:
    case ResolveOutcome::kExpired:
      return Gone();
    case ResolveOutcome::kNotFound:
      return NotFound();
    case ResolveOutcome::kInvalid:
      return BadRequest();
    case ResolveOutcome::kUnavailable:
      return Unavailable("service unavailable\n");
    case ResolveOutcome::kTimedOut:
      return Unavailable("timed out waiting for the service\n");
    case ResolveOutcome::kOverloaded:
      return Unavailable("too many look-ups waiting; retry\n");
  }
  return InternalError();
}

bool IsNoAnswer(ResolveOutcome outcome) {
  return outcome == ResolveOutcome::kUnavailable || outcome == ResolveOutcome::kTimedOut ||
         outcome == ResolveOutcome::kOverloaded;
}

ResponsePlan PlanForProtocolError(int status) {
  switch (status) {
    case 400:
      return BadRequest();
    case 413:
      return Plain(413, "Content Too Large", "content too large\n");
    case 414:
      return UriTooLong();
    case 431:
      return Plain(431, "Request Header Fields Too Large", "request header fields too large\n");
    case 505:
      return Plain(505, "HTTP Version Not Supported", "http version not supported\n");
    default:
      return InternalError();
  }
}

ResponsePlan PlanForTarget(TargetKind kind) {
  switch (kind) {
    case TargetKind::kPrefiltered:
    case TargetKind::kMetrics:
      // Same bytes as an unknown code: a prober learns nothing from it.
      return NotFound();
    case TargetKind::kBadRequest:
      return BadRequest();
    case TargetKind::kMethodNotAllowed:
      return Plain(405, "Method Not Allowed", "method not allowed\n",
                   "Cache-Control: no-store\r\nAllow: GET, HEAD\r\n");
    case TargetKind::kUriTooLong:
      return UriTooLong();
    case TargetKind::kHealthz:
      return Plain(200, "OK", "ok\n");
    case TargetKind::kFavicon:
      return Plain(204, "No Content", "", "Cache-Control: public, max-age=86400\r\n");
    case TargetKind::kRobots:
      // Crawlers may follow redirects (link previews); nothing to index.
      return Plain(200, "OK", "User-agent: *\nDisallow:\n",
                   "Cache-Control: public, max-age=86400\r\n");
    case TargetKind::kLookupCode:
    case TargetKind::kLookupAlias:
    case TargetKind::kReadyz:
      return InternalError();
  }
  return InternalError();
}

ResponsePlan PlanForReadiness(bool ready) {
  return ready ? Plain(200, "OK", "ready\n") : Unavailable("not ready\n");
}

}  // namespace shortener::edge
