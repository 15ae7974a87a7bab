// LinkResolver: the redirect edge's upstream, the one seam between the edge
// and the shorten-service for what a code means. Resolve one code, resolve
// a batch, and say whether the upstream can be asked at all (/readyz).
//
// Implementations:
//  - ServiceClient (service_client.h): gRPC Resolve / BatchResolve over the
//    edge's channel; Ready() follows the channel and the service's verdict
//    on the edge's key.
//  - InMemoryLinkResolver (in_memory_link_resolver.h): a table of links in
//    memory, answered on a thread of its own, with switches for an outage
//    and for calls that hang; for tests of everything above this seam (the
//    resolve batcher, the redirect handler), and to keep gRPC's
//    uninstrumented libraries out of the TSan runs.
// Both pass one contract suite (tests/edge/upstream/link_resolver_contract*).
//
// Contract:
//  - An active link: kActive with its Location, its redirect status (301,
//    302, 307 or 308) and its expire_time if it has one. A revoked link:
//    kRevoked; a link past its expire_time: kExpired (revocation wins). A
//    code no link has: kNotFound. A code that is neither a generated code
//    nor an alias ([A-Za-z0-9_-], 1 to 64 characters): kInvalid.
//  - Anything else (upstream unreachable, refusing the edge's key, a
//    deadline passed, an answer this edge cannot read): kUnavailable with
//    the reason in `error`. Such a reply says nothing about the code. The
//    resolver itself never answers kTimedOut or kOverloaded: those are the
//    batcher's and the handler's decisions.
//  - `done` runs exactly once, on a thread of the resolver's own (never the
//    caller's, never under a caller's lock), by `deadline` at the latest: a
//    call with no answer by then ends kUnavailable with DEADLINE_EXCEEDED.
//    A deadline already past is answered so without asking.
//  - ResolveBatch answers one reply per code, in the order given; a failure
//    of the call as a whole gives every code kUnavailable.
//  - Ready(): true while a call could be answered now. Cheap; it never
//    blocks (it may start a connection attempt).
//
// Thread safety: implementations are thread-safe.
#ifndef SHORTENER_EDGE_UPSTREAM_LINK_RESOLVER_H_
#define SHORTENER_EDGE_UPSTREAM_LINK_RESOLVER_H_

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
  // From the call's start to its answer (for the resolve latency metric).
  absl::Duration latency;
};

class LinkResolver {
 public:
  // Deadlines are waits: they are measured on the monotonic clock.
  using Clock = std::chrono::steady_clock;
  using Done = absl::AnyInvocable<void(ResolveReply)>;
  using BatchDone = absl::AnyInvocable<void(std::vector<ResolveReply>)>;

  virtual ~LinkResolver() = default;

  // Resolves one code.
  virtual void Resolve(absl::string_view code, Clock::time_point deadline, Done done) = 0;
  // Resolves `codes` (1..1000) in one call; one reply per code, in order.
  virtual void ResolveBatch(std::vector<std::string> codes, Clock::time_point deadline,
                            BatchDone done) = 0;
  // Whether the upstream can answer now (see above).
  virtual bool Ready() const = 0;
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_UPSTREAM_LINK_RESOLVER_H_
