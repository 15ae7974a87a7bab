// ServiceClient: the LinkResolver (link_resolver.h) that asks the
// shorten-service: non-blocking Resolve and BatchResolve calls (gRPC
// callback API; the event loop never waits on a miss) and readiness.
//
// Resolve outcomes map to what the edge answers (http_status.h):
//   OK + ACTIVE -> kActive (302/301/307/308 from redirect_type)
//   OK + REVOKED / EXPIRED -> kRevoked / kExpired (410)
//   NOT_FOUND -> kNotFound (404); INVALID_ARGUMENT -> kInvalid (400)
//   anything else (UNAVAILABLE, DEADLINE_EXCEEDED, an unknown state, ...)
//   -> kUnavailable (503, or a stale cache entry): never cached.
// Calls fail fast while the channel cannot connect (no wait_for_ready): a
// dead service costs a request one failed attempt, not the whole deadline.
//
// Thread safety: all methods are thread-safe.
#ifndef SHORTENER_EDGE_UPSTREAM_SERVICE_CLIENT_H_
#define SHORTENER_EDGE_UPSTREAM_SERVICE_CLIENT_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "edge/http_status.h"
#include "edge/upstream/link_resolver.h"
#include "grpcpp/channel.h"
#include "grpcpp/support/channel_arguments.h"
#include "shortener/v1/shortener.grpc.pb.h"

namespace shortener::edge {

struct ServiceClientOptions {
  // Deadline of one Resolve/BatchResolve call (capped further by a caller's
  // own deadline). Default 2 s.
  absl::Duration resolve_timeout = absl::Seconds(2);
};

// gRPC channel arguments the edge uses towards the service: keepalive pings
// so a vanished peer (not just a closed socket) is noticed in seconds,
// quick reconnects after the service restarts, and the round_robin policy:
// calls spread over every address the target resolves to (all replicas
// behind a dns:/// name of a headless Service; docs/edge.md).
grpc::ChannelArguments EdgeChannelArguments();

class ServiceClient final : public LinkResolver {
 public:
  ServiceClient(std::shared_ptr<grpc::Channel> channel, ServiceClientOptions options);

  // Starts one Resolve; `done` runs exactly once on a gRPC thread. The call's
  // deadline is resolve_timeout from now or `deadline`, whichever is first
  // (past it: kUnavailable with DEADLINE_EXCEEDED).
  void Resolve(absl::string_view code, Clock::time_point deadline, Done done) override;

  // Starts one BatchResolve for `codes` (1..1000), deadline as Resolve;
  // `done` runs exactly once on a gRPC thread with one reply per code, in
  // order. A failed call gives every code kUnavailable with the call's
  // error. Against a service without BatchResolve (UNIMPLEMENTED), falls
  // back to one Resolve per code (same deadline).
  void ResolveBatch(std::vector<std::string> codes, Clock::time_point deadline,
                    BatchDone done) override;

  // True while the channel is connected (asks it to connect when idle) and
  // the last call did not have this edge's key refused (UNAUTHENTICATED or
  // PERMISSION_DENIED): an edge whose key was revoked cannot serve a miss
  // and should get no traffic.
  bool Ready() const override;

 private:
  // Tracks whether the service refuses our key (see Ready).
  void NoteCallStatus(const grpc::Status& status);
  // One Resolve per code, answered together.
  void ResolveEach(std::vector<std::string> codes, Clock::time_point deadline, BatchDone done);
  // The earlier of now + resolve_timeout and `deadline`, for gRPC.
  std::chrono::system_clock::time_point CallDeadline(Clock::time_point deadline) const;

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<shortener::v1::ShortenService::Stub> stub_;
  ServiceClientOptions options_;
  std::atomic<bool> batch_unimplemented_{false};
  std::atomic<bool> key_refused_{false};  // set and cleared by NoteCallStatus
};

// Maps one BatchResolve item (its response or its error) to a reply.
ResolveReply ReplyFromBatchItem(const shortener::v1::BatchResolveResult& item);

// Maps one Resolve answer (status + response) to a reply. Exposed for tests.
ResolveReply ReplyFromResolve(const grpc::Status& status,
                              const shortener::v1::ResolveResponse& response);

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_UPSTREAM_SERVICE_CLIENT_H_
