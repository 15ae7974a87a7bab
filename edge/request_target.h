// Request-target classification for the redirect edge: the first, pure step
// of every request.
//
// Request flow (design, "Redirect edge"; docs/edge.md to come). The pieces
// of edge_core are marked with *:
//   1. The HTTP server (Beast, I/O only) reads a request head.
//   2. * ClassifyRequest() decides from the method and target alone: 414 for
//      an over-long request line, 405 for anything but GET/HEAD, a built-in
//      path (/healthz, /readyz, /metrics, /favicon.ico, /robots.txt), 400 for
//      a malformed code, 404 "prefiltered" for a string of the generated shape
//      whose check character fails (no cache look-up, no RPC, so it works
//      while the service is down), or a code/alias to look up.
//   3. Look-ups go to the cache, and on a miss to the shorten-service's
//      Resolve RPC (coalesced per code); the result is a ResolveResult.
//   4. * PlanForOutcome() / PlanForTarget() (http_status.h) map the result to
//      status, reason, headers and body: the one status table of the edge.
//   5. * ResponseWriter (response_builder.h) assembles the bytes into a
//      reused buffer with Connection and Date; the server writes them.
// Nothing here allocates, throws or does I/O, so it can be fuzzed directly.
//
// Thread safety: free functions over their arguments; safe from any thread
// as long as the ShortCodec is (it is immutable).
#ifndef SHORTENER_EDGE_REQUEST_TARGET_H_
#define SHORTENER_EDGE_REQUEST_TARGET_H_

#include <cstddef>

#include "absl/strings/string_view.h"
#include "lib/codec/alias.h"
#include "lib/codec/short_codec.h"

namespace shortener::edge {

enum class Method { kGet, kHead, kOther };

// What the edge does with a request, decided before any look-up.
enum class TargetKind {
  kLookupCode,        // generated shape, check character verifies
  kLookupAlias,       // valid custom-alias syntax, not the generated shape
  kPrefiltered,       // generated shape, check fails: 404, no cache, no RPC
  kHealthz,           // /healthz
  kReadyz,            // /readyz
  kMetrics,           // /metrics
  kFavicon,           // /favicon.ico
  kRobots,            // /robots.txt
  kBadRequest,        // 400, see BadTargetReason
  kMethodNotAllowed,  // 405, Allow: GET, HEAD
  kUriTooLong,        // 414
};

// Why a target got kBadRequest (for metrics and tests; never sent back).
enum class BadTargetReason {
  kNone,
  kNotOriginForm,  // does not start with '/' (absolute-form, "*", empty)
  kEmpty,          // "/" or "/?..."
  kDotSegment,     // contains ".."
  kPercent,        // any '%': codes and aliases never need escapes
  kSlash,          // a '/' after the first (nested path)
  kBadCharacter,   // a character outside [A-Za-z0-9_-]
  kTooLong,        // more than kMaxCodeLength characters
};

// Longest code or alias accepted: the alias rule's limit (lib/codec/alias.h).
inline constexpr size_t kMaxCodeLength = codec::kMaxAliasLength;

struct RequestTargetOptions {
  // Longest request line accepted, counted as
  // method + ' ' + target + " HTTP/1.1" (CRLF excluded); longer gets 414.
  // Default 8 KiB.
  size_t max_request_line = 8 * 1024;
};

struct RequestTarget {
  TargetKind kind = TargetKind::kBadRequest;
  Method method = Method::kOther;
  // For kLookupCode, kLookupAlias and kPrefiltered: the code, a view into
  // the `target` passed to ClassifyRequest (query string stripped). Empty
  // otherwise.
  absl::string_view code;
  BadTargetReason bad_reason = BadTargetReason::kNone;
};

// GET and HEAD (case-sensitive, as RFC 9110 methods are); anything else is
// kOther.
Method ParseMethod(absl::string_view method);

// Classifies one request by its method and request-target (as sent, e.g.
// "/Ab3xYz9?utm=1"). Order: 414 (length), 405 (method), 400 (not
// origin-form), built-in paths, code syntax, prefilter. The query string is
// ignored for the code and for built-in paths.
RequestTarget ClassifyRequest(absl::string_view method, absl::string_view target,
                              const codec::ShortCodec& codec,
                              const RequestTargetOptions& options = {});

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_REQUEST_TARGET_H_
