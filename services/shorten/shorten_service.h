// ShortenServiceImpl: the thin gRPC adapter over Shortener. Each handler
// counts the call (RpcCounters), decodes the proto, calls the domain logic,
// encodes the answer. Uses the callback API; blocking store calls run on
// `blocking_pool` (or the Shortener's read batcher), never on a reactor
// thread. WatchInvalidations streams an InvalidationHub subscription
// (invalidation_stream.h). Thread-safe.
#ifndef SHORTENER_SERVICES_SHORTEN_SHORTEN_SERVICE_H_
#define SHORTENER_SERVICES_SHORTEN_SHORTEN_SERVICE_H_

#include "lib/common/thread_pool.h"
#include "services/shorten/invalidation_hub.h"
#include "services/shorten/rpc_counters.h"
#include "services/shorten/shortener.h"
#include "shortener/v1/shortener.grpc.pb.h"

namespace shortener::service {

class ShortenServiceImpl final : public shortener::v1::ShortenService::CallbackService {
 public:
  // All outlive the service.
  ShortenServiceImpl(Shortener* shortener, ThreadPool* blocking_pool, InvalidationHub* hub)
      : shortener_(shortener), blocking_pool_(blocking_pool), hub_(hub) {}

  // Calls received so far, per method.
  const RpcCounters& counters() const { return counters_; }

  grpc::ServerUnaryReactor* Shorten(grpc::CallbackServerContext* ctx,
                                    const v1::ShortenRequest* request,
                                    v1::ShortenResponse* response) override;
  grpc::ServerUnaryReactor* BatchShorten(grpc::CallbackServerContext* ctx,
                                         const v1::BatchShortenRequest* request,
                                         v1::BatchShortenResponse* response) override;
  grpc::ServerUnaryReactor* Resolve(grpc::CallbackServerContext* ctx,
                                    const v1::ResolveRequest* request,
                                    v1::ResolveResponse* response) override;
  grpc::ServerUnaryReactor* BatchResolve(grpc::CallbackServerContext* ctx,
                                         const v1::BatchResolveRequest* request,
                                         v1::BatchResolveResponse* response) override;
  grpc::ServerUnaryReactor* GetLink(grpc::CallbackServerContext* ctx,
                                    const v1::GetLinkRequest* request,
                                    v1::Link* response) override;
  grpc::ServerUnaryReactor* Revoke(grpc::CallbackServerContext* ctx,
                                   const v1::RevokeRequest* request,
                                   v1::Link* response) override;
  grpc::ServerUnaryReactor* RecordClicks(grpc::CallbackServerContext* ctx,
                                         const v1::RecordClicksRequest* request,
                                         v1::RecordClicksResponse* response) override;
  grpc::ServerUnaryReactor* GetClickStats(grpc::CallbackServerContext* ctx,
                                          const v1::GetClickStatsRequest* request,
                                          v1::GetClickStatsResponse* response) override;
  grpc::ServerWriteReactor<v1::Invalidation>* WatchInvalidations(
      grpc::CallbackServerContext* ctx,
      const v1::WatchInvalidationsRequest* request) override;

 private:
  Shortener* shortener_;
  ThreadPool* blocking_pool_;
  InvalidationHub* hub_;
  RpcCounters counters_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_SHORTEN_SERVICE_H_
