// ResolveTransport: the seam between the resolve batcher and the service.
// The real implementation is ServiceClient (gRPC Resolve and BatchResolve);
// tests use an in-memory one (tests/edge/upstream/fake_resolve_transport.h),
// which also lets the batcher's concurrency tests run under TSan without
// gRPC's uninstrumented libraries.
//
// Contract for both: `done` runs exactly once, on a thread of the
// transport's own (never the caller's, never under a caller's lock), by
// `deadline` at the latest: a call with no answer by then ends with
// kUnavailable and a DEADLINE_EXCEEDED error, as gRPC does.
//
// Thread safety: implementations are thread-safe.
#ifndef SHORTENER_EDGE_UPSTREAM_RESOLVE_TRANSPORT_H_
#define SHORTENER_EDGE_UPSTREAM_RESOLVE_TRANSPORT_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "edge/http_status.h"

namespace shortener::edge {

struct ResolveReply {
  ResolveOutcome outcome = ResolveOutcome::kUnavailable;
  int redirect_status = 302;  // for kActive
  std::string location;       // for kActive
  std::optional<absl::Time> expire_time;
  // Why the outcome is kUnavailable (for logs); OK otherwise.
  absl::Status error;
  absl::Duration latency;
};

class ResolveTransport {
 public:
  using Clock = std::chrono::steady_clock;

  virtual ~ResolveTransport() = default;

  // Resolves one code.
  virtual void Resolve(absl::string_view code, Clock::time_point deadline,
                       absl::AnyInvocable<void(ResolveReply)> done) = 0;
  // Resolves `codes` (1..1000) in one call; one reply per code, in order.
  virtual void ResolveBatch(std::vector<std::string> codes, Clock::time_point deadline,
                            absl::AnyInvocable<void(std::vector<ResolveReply>)> done) = 0;
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_UPSTREAM_RESOLVE_TRANSPORT_H_
