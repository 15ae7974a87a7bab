// The edge's one table from "what happened" to "what HTTP says": a resolve
// outcome (or a decision made before any look-up, see request_target.h)
// becomes a ResponsePlan (status, reason, fixed header lines, body) that
// response_builder.h turns into bytes. Every status the edge sends is here.
//
// Decisions (also for docs/edge.md):
// - Every response carries Cache-Control. 302/307 get "private, max-age=0"
//   so neither browsers nor proxies reuse a redirect that may be revoked a
//   second later. 301/308 get "private, max-age=300": without an explicit
//   lifetime browsers keep a 301 indefinitely, so a revoked permanent link
//   would never stop working for someone who clicked it once; five minutes
//   bounds that, and "private" keeps shared proxies out. Errors (404, 410,
//   400, ...) are heuristically cacheable by default, so they get "no-store":
//   a 404 may become a link and a 503 must not stick.
// - A stored URL that is not a safe Location value (empty, any byte outside
//   visible ASCII 0x21..0x7E: CR, LF, NUL, space, controls, non-ASCII; or
//   not an absolute URL "scheme://host..." with a scheme of the edge's
//   --allowed_schemes, so never a relative or scheme-relative reference
//   like "/x" or "//evil.example", nor "javascript:...")
//   or a redirect status outside 301/302/307/308 is refused with
//   502 Bad Gateway: the bad value came from upstream (the service or the
//   cache it filled), the request was fine. Callers should count it and must
//   not cache the outcome.
// - 503 carries "Retry-After: 1". 405 carries "Allow: GET, HEAD".
// - Three outcomes say nothing about the code and are answered 503 with
//   "Retry-After: 1" (IsNoAnswer): kUnavailable (the service could not be
//   asked or failed), kTimedOut (the request's miss deadline passed before
//   an answer came) and kOverloaded (the edge refused to ask: too many
//   look-ups already waiting). Each has its own body, so a client (and a
//   test) can tell them apart; none is ever cached, and a stale entry within
//   its grace is served instead when there is one (link_cache.h).
// - Nothing from the request is ever placed in a header or body; the only
//   dynamic header value is the Location, checked as above.
//
// Thread safety: pure functions returning views of static storage (and of
// the caller's location string); safe from any thread.
#ifndef SHORTENER_EDGE_HTTP_STATUS_H_
#define SHORTENER_EDGE_HTTP_STATUS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "edge/request_target.h"

namespace shortener::edge {

// What the cache or the service said about a code or alias.
enum class ResolveOutcome {
  kActive,       // redirect to location with redirect_status
  kRevoked,      // 410
  kExpired,      // 410
  kNotFound,     // 404
  kInvalid,      // 400: the service judged the code malformed
  kUnavailable,  // 503: service unreachable and nothing cached
  kTimedOut,     // 503: no answer within the request's miss deadline
  kOverloaded,   // 503: the edge refused to queue the look-up (a bound)
};

// kUnavailable, kTimedOut and kOverloaded: no answer about the code (never
// cached; a stale entry may be served instead).
bool IsNoAnswer(ResolveOutcome outcome);

struct ResolveResult {
  ResolveOutcome outcome = ResolveOutcome::kNotFound;
  // For kActive: 301, 302, 307 or 308. Default 302.
  int redirect_status = 302;
  // For kActive: the stored (normalised) long URL. Not owned; must outlive
  // the plan built from it.
  absl::string_view location;
};

// A decided response without framing (Connection, Date, Content-Length are
// added by response_builder.h).
struct ResponsePlan {
  int status = 500;
  absl::string_view reason;  // "Found"
  // Empty unless a redirect: the value of the Location header.
  absl::string_view location;
  // Fixed header lines, each ending in CRLF ("Cache-Control: ...\r\n").
  absl::string_view headers;
  // Empty or a small static text; sent with Content-Type text/plain.
  absl::string_view body;
};

// The schemes a Location may have: --allowed_schemes, the flag the
// shorten-service has with the same name and meaning (its long URLs are
// checked against its own list; the edge checks again what it is about to
// send). A value type, fixed at start.
class LocationPolicy {
 public:
  // Default: http and https. Compared case-insensitively; each entry should
  // be a scheme name (url::ValidateSchemes checks the flag).
  LocationPolicy() : LocationPolicy({"http", "https"}) {}
  explicit LocationPolicy(std::vector<std::string> allowed_schemes);

  const std::vector<std::string>& allowed_schemes() const { return schemes_; }

 private:
  friend bool IsSafeLocation(absl::string_view url, const LocationPolicy& policy);
  std::vector<std::string> schemes_;  // lower case
};

// The default policy (http, https).
const LocationPolicy& DefaultLocationPolicy();

// True iff `url` is non-empty, every byte is visible ASCII (0x21..0x7E), and
// it is an absolute URL: a scheme of `policy`, "://", then a host that
// starts with a letter, a digit or "[" (an IPv6 literal). The one rule for
// what the edge puts in a Location header; costs a few compares besides the
// byte scan, no allocation.
bool IsSafeLocation(absl::string_view url, const LocationPolicy& policy = DefaultLocationPolicy());

// The response for a resolve outcome. kActive with an unsafe location (per
// `policy`) or an unknown redirect status gives the 502 plan (see above).
ResponsePlan PlanForOutcome(const ResolveResult& result,
                            const LocationPolicy& policy = DefaultLocationPolicy());

// The response for a decision made without a look-up: kPrefiltered (404,
// same bytes as an unknown code), kBadRequest, kMethodNotAllowed,
// kUriTooLong, kHealthz (200 "ok"), kFavicon (204), kRobots (200), kMetrics
// (404, same bytes as an unknown code: metrics are served on the admin
// listener only, edge/app/admin_handler.h, and the public port must not
// even confirm they exist). kLookupCode/kLookupAlias/kReadyz need a look-up
// or live state and are not decided here: they give the 500 plan (a caller
// bug).
ResponsePlan PlanForTarget(TargetKind kind);

// What the HTTP layer answers itself, before any handler: 400 (malformed),
// 413 (body too large), 414 (request line too long), 431 (header block too
// large), 505 (HTTP version), and 500 for anything else (a handler that did
// not answer). Always no-store; the caller adds Connection: close.
ResponsePlan PlanForProtocolError(int status);

// /readyz: 200 "ready" or 503 "not ready" (with Retry-After).
ResponsePlan PlanForReadiness(bool ready);

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_HTTP_STATUS_H_
