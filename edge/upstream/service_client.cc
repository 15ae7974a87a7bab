#include "edge/upstream/service_client.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/client_context.h"
#include "lib/common/log.h"
#include "lib/grpcutil/status.h"
#include "proto/redirect_type.h"

namespace shortener::edge {
namespace {

namespace pb = ::shortener::v1;

// One call's state, alive until its callback has run.
struct ResolveCall {
  grpc::ClientContext context;
  pb::ResolveRequest request;
  pb::ResolveResponse response;
  LinkResolver::Done done;
  std::chrono::steady_clock::time_point start;
};

struct ResolveBatchCall {
  grpc::ClientContext context;
  pb::BatchResolveRequest request;
  pb::BatchResolveResponse response;
  LinkResolver::BatchDone done;
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point deadline;  // the caller's
};

}  // namespace

grpc::ChannelArguments EdgeChannelArguments() {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // Reconnect quickly after a service restart (defaults back off to 120 s).
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2'000);
  // Every address the target resolves to gets calls: behind a headless
  // Service (dns:///name:port) that is every service replica, where
  // pick_first would send everything to one. Ours, not DNS's: a TXT record
  // cannot change it.
  args.SetServiceConfigJSON(R"({"loadBalancingConfig":[{"round_robin":{}}]})");
  args.SetInt(GRPC_ARG_SERVICE_CONFIG_DISABLE_RESOLUTION, 1);
  // gRPC re-resolves a dns:/// name when a connection fails or closes, but
  // at most this often (default 30 s): a replica's new address is used
  // within 5 s of the old one going away.
  args.SetInt(GRPC_ARG_DNS_MIN_TIME_BETWEEN_RESOLUTIONS_MS, 5'000);
  return args;
}

ResolveReply ReplyFromResolve(const grpc::Status& status, const pb::ResolveResponse& response) {
  ResolveReply reply;
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      break;
    case grpc::StatusCode::NOT_FOUND:
      reply.outcome = ResolveOutcome::kNotFound;
      return reply;
    case grpc::StatusCode::INVALID_ARGUMENT:
      reply.outcome = ResolveOutcome::kInvalid;
      return reply;
    default:
      reply.outcome = ResolveOutcome::kUnavailable;
      reply.error = grpcutil::FromGrpcStatus(status);
      return reply;
  }
  if (response.has_expire_time()) {
    reply.expire_time = grpcutil::FromProtoTimestamp(response.expire_time());
  }
  switch (response.state()) {
    case pb::LINK_STATE_ACTIVE:
      reply.outcome = ResolveOutcome::kActive;
      // A type this edge does not know (a newer service's): the default.
      reply.redirect_status = RedirectStatusOf(response.redirect_type()).value_or(302);
      reply.location = response.long_url();
      break;
    case pb::LINK_STATE_REVOKED:
      reply.outcome = ResolveOutcome::kRevoked;
      break;
    case pb::LINK_STATE_EXPIRED:
      reply.outcome = ResolveOutcome::kExpired;
      break;
    default:
      // A state this edge does not know: not a reason to redirect anywhere.
      reply.outcome = ResolveOutcome::kUnavailable;
      reply.error = absl::InternalError(
          absl::StrCat("Resolve answered an unknown link state ", response.state()));
      break;
  }
  return reply;
}

ServiceClient::ServiceClient(std::shared_ptr<grpc::Channel> channel, ServiceClientOptions options)
    : channel_(std::move(channel)),
      stub_(pb::ShortenService::NewStub(channel_)),
      options_(options) {}

std::chrono::system_clock::time_point ServiceClient::CallDeadline(
    Clock::time_point deadline) const {
  std::chrono::nanoseconds wait = absl::ToChronoNanoseconds(options_.resolve_timeout);
  if (deadline != Clock::time_point::max()) {
    wait = std::min(wait,
                    std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - Clock::now()));
  }
  return std::chrono::system_clock::now() + std::max(wait, std::chrono::nanoseconds(0));
}

void ServiceClient::Resolve(absl::string_view code, Clock::time_point deadline, Done done) {
  auto* call = new ResolveCall;
  call->request.set_code(std::string(code));
  call->done = std::move(done);
  call->start = std::chrono::steady_clock::now();
  call->context.set_deadline(CallDeadline(deadline));
  stub_->async()->Resolve(
      &call->context, &call->request, &call->response, [this, call](grpc::Status status) {
        NoteCallStatus(status);
        ResolveReply reply = ReplyFromResolve(status, call->response);
        reply.latency = absl::FromChrono(std::chrono::steady_clock::now() - call->start);
        auto done = std::move(call->done);
        delete call;
        done(std::move(reply));
      });
}

ResolveReply ReplyFromBatchItem(const pb::BatchResolveResult& item) {
  if (item.has_error()) {
    return ReplyFromResolve(
        grpc::Status(static_cast<grpc::StatusCode>(item.error().code()), item.error().message()),
        pb::ResolveResponse());
  }
  return ReplyFromResolve(grpc::Status::OK, item.response());
}

void ServiceClient::ResolveEach(std::vector<std::string> codes, Clock::time_point deadline,
                                BatchDone done) {
  struct Gather {
    std::mutex mu;
    std::vector<ResolveReply> replies;
    size_t remaining;
    BatchDone done;
  };
  auto gather = std::make_shared<Gather>();
  gather->replies.resize(codes.size());
  gather->remaining = codes.size();
  gather->done = std::move(done);
  for (size_t i = 0; i < codes.size(); ++i) {
    Resolve(codes[i], deadline, [gather, i](ResolveReply reply) {
      std::unique_lock<std::mutex> lock(gather->mu);
      gather->replies[i] = std::move(reply);
      if (--gather->remaining > 0) return;
      lock.unlock();
      gather->done(std::move(gather->replies));
    });
  }
}

void ServiceClient::ResolveBatch(std::vector<std::string> codes, Clock::time_point deadline,
                                 BatchDone done) {
  if (batch_unimplemented_.load(std::memory_order_relaxed)) {
    ResolveEach(std::move(codes), deadline, std::move(done));
    return;
  }
  auto* call = new ResolveBatchCall;
  for (std::string& code : codes) call->request.add_codes(std::move(code));
  call->done = std::move(done);
  call->start = std::chrono::steady_clock::now();
  call->deadline = deadline;
  call->context.set_deadline(CallDeadline(deadline));
  stub_->async()->BatchResolve(
      &call->context, &call->request, &call->response, [this, call](grpc::Status status) {
        NoteCallStatus(status);
        if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
          // A service older than this edge (a rolling deploy): one Resolve
          // per code from now on.
          if (!batch_unimplemented_.exchange(true)) {
            LogWarning("the service does not implement BatchResolve: resolving one code per call");
          }
          std::vector<std::string> codes(call->request.codes().begin(),
                                         call->request.codes().end());
          auto done = std::move(call->done);
          const Clock::time_point deadline = call->deadline;
          delete call;
          ResolveEach(std::move(codes), deadline, std::move(done));
          return;
        }
        const int n = call->request.codes_size();
        const absl::Duration latency =
            absl::FromChrono(std::chrono::steady_clock::now() - call->start);
        if (status.ok() && call->response.results_size() != n) {
          status =
              grpc::Status(grpc::StatusCode::INTERNAL,
                           absl::StrCat("BatchResolve answered ", call->response.results_size(),
                                        " results for ", n, " codes"));
        }
        std::vector<ResolveReply> replies(n);
        for (int i = 0; i < n; ++i) {
          if (status.ok()) {
            replies[i] = ReplyFromBatchItem(call->response.results(i));
          } else {
            // The call failed as a whole: says nothing about any one code
            // (a call-level INVALID_ARGUMENT must not become a cached 400).
            replies[i].outcome = ResolveOutcome::kUnavailable;
            replies[i].error = grpcutil::FromGrpcStatus(status);
          }
          replies[i].latency = latency;
        }
        auto done = std::move(call->done);
        delete call;
        done(std::move(replies));
      });
}

void ServiceClient::NoteCallStatus(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAUTHENTICATED:
    case grpc::StatusCode::PERMISSION_DENIED:
      if (!key_refused_.exchange(true, std::memory_order_relaxed)) {
        LogError(
            "the service refuses this edge's key: %s; check --api_key_file (an "
            "infrastructure key with scopes resolve,record_clicks,watch_invalidations)",
            status.error_message());
      }
      break;
    case grpc::StatusCode::OK:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::INVALID_ARGUMENT:
      key_refused_.store(false, std::memory_order_relaxed);
      break;
    default:  // says nothing about the key
      break;
  }
}

bool ServiceClient::Ready() const {
  return !key_refused_.load(std::memory_order_relaxed) &&
         channel_->GetState(/*try_to_connect=*/true) == GRPC_CHANNEL_READY;
}

}  // namespace shortener::edge
