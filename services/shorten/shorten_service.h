// ShortenServiceImpl: the thin gRPC adapter over the domain objects. Each
// handler counts the call (RpcCounters), has the Authorizer admit it (key,
// scope, rate: see authorizer.h; nothing else here checks access), decodes
// the proto (proto_mapping.h), makes one call to the domain logic with the
// caller's principal, and encodes the answer, errors as ClientStatus shows
// them (client_status.h):
//   Shorten, BatchShorten, Resolve, BatchResolve, Revoke,
//   UpdateLink                                             Shortener
//   GetLink, GetQrCode, GetClickStats                      LinkStats
//   ListLinks                                              LinkLister
//   DeleteLink, RevokeLinks, DeleteLinks                   LinkRemover
//   RecordClicks                                           ClickRecorder
//   CreateApiKey, ListApiKeys, RevokeApiKey                KeyAdmin
//   WatchInvalidations                                     InvalidationHub
//                                                          (invalidation_stream.h)
// Uses the callback API; the domain calls that block (Revoke, UpdateLink,
// the deletions and bulk revocations, RecordClicks, the key admin calls) run on `blocking_pool`,
// never on a reactor thread; when the pool's queue is full the call answers RESOURCE_EXHAUSTED
// naming it ("blocking pool is full: ..."). Every request is checked against its method's size and
// item limits (request_limits.h) before anything else, key look-up included: INVALID_ARGUMENT
// naming the limit. Thread-safe.
#ifndef SHORTENER_SERVICES_SHORTEN_SHORTEN_SERVICE_H_
#define SHORTENER_SERVICES_SHORTEN_SHORTEN_SERVICE_H_

#include <functional>
#include <memory>
#include <utility>

#include "lib/common/thread_pool.h"
#include "services/shorten/authorizer.h"
#include "services/shorten/click_recorder.h"
#include "services/shorten/invalidation_hub.h"
#include "services/shorten/key_admin.h"
#include "services/shorten/link_lister.h"
#include "services/shorten/link_remover.h"
#include "services/shorten/link_stats.h"
#include "services/shorten/request_limits.h"
#include "services/shorten/rpc_counters.h"
#include "services/shorten/shortener.h"
#include "shortener/v1/shortener.grpc.pb.h"

namespace shortener::service {

class ShortenServiceImpl final : public shortener::v1::ShortenService::CallbackService {
 public:
  // All outlive the service. `limits`: how large each request may be.
  ShortenServiceImpl(Shortener* shortener, ThreadPool* blocking_pool, InvalidationHub* hub,
                     Authorizer* authorizer, KeyAdmin* key_admin, ClickRecorder* clicks,
                     LinkStats* link_stats, LinkLister* lister, LinkRemover* remover,
                     RequestLimits limits)
      : limits_(limits),
        shortener_(shortener),
        blocking_pool_(blocking_pool),
        hub_(hub),
        authorizer_(authorizer),
        key_admin_(key_admin),
        clicks_(clicks),
        link_stats_(link_stats),
        lister_(lister),
        remover_(remover) {}

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
                                    const v1::GetLinkRequest* request, v1::Link* response) override;
  grpc::ServerUnaryReactor* UpdateLink(grpc::CallbackServerContext* ctx,
                                       const v1::UpdateLinkRequest* request,
                                       v1::Link* response) override;
  grpc::ServerUnaryReactor* ListLinks(grpc::CallbackServerContext* ctx,
                                      const v1::ListLinksRequest* request,
                                      v1::ListLinksResponse* response) override;
  grpc::ServerUnaryReactor* GetQrCode(grpc::CallbackServerContext* ctx,
                                      const v1::GetQrCodeRequest* request,
                                      v1::QrCode* response) override;
  grpc::ServerUnaryReactor* Revoke(grpc::CallbackServerContext* ctx,
                                   const v1::RevokeRequest* request, v1::Link* response) override;
  grpc::ServerUnaryReactor* DeleteLink(grpc::CallbackServerContext* ctx,
                                       const v1::DeleteLinkRequest* request,
                                       google::protobuf::Empty* response) override;
  grpc::ServerUnaryReactor* RevokeLinks(grpc::CallbackServerContext* ctx,
                                        const v1::RevokeLinksRequest* request,
                                        v1::RevokeLinksResponse* response) override;
  grpc::ServerUnaryReactor* DeleteLinks(grpc::CallbackServerContext* ctx,
                                        const v1::DeleteLinksRequest* request,
                                        v1::DeleteLinksResponse* response) override;
  grpc::ServerUnaryReactor* RecordClicks(grpc::CallbackServerContext* ctx,
                                         const v1::RecordClicksRequest* request,
                                         v1::RecordClicksResponse* response) override;
  grpc::ServerUnaryReactor* GetClickStats(grpc::CallbackServerContext* ctx,
                                          const v1::GetClickStatsRequest* request,
                                          v1::GetClickStatsResponse* response) override;
  grpc::ServerWriteReactor<v1::Invalidation>* WatchInvalidations(
      grpc::CallbackServerContext* ctx, const v1::WatchInvalidationsRequest* request) override;
  grpc::ServerUnaryReactor* CreateApiKey(grpc::CallbackServerContext* ctx,
                                         const v1::CreateApiKeyRequest* request,
                                         v1::CreateApiKeyResponse* response) override;
  grpc::ServerUnaryReactor* ListApiKeys(grpc::CallbackServerContext* ctx,
                                        const v1::ListApiKeysRequest* request,
                                        v1::ListApiKeysResponse* response) override;
  grpc::ServerUnaryReactor* RevokeApiKey(grpc::CallbackServerContext* ctx,
                                         const v1::RevokeApiKeyRequest* request,
                                         v1::ApiKey* response) override;

 private:
  using PrincipalPtr = Authorizer::PrincipalPtr;

  // Counts the call, checks `request` against the method's limits
  // (RequestLimits), then has it authorized (`cost` tokens): `done` gets
  // the caller's principal, or the limit's or the Authorizer's refusal (on
  // this thread or the key look-up pool's).
  void Admit(grpc::CallbackServerContext* ctx, Rpc rpc, const google::protobuf::Message& request,
             int cost, Authorizer::Done done);
  // Admit for a unary call: then runs body(principal, reactor), which must
  // finish the reactor; a refusal finishes it with its status instead.
  template <typename Body>
  grpc::ServerUnaryReactor* Authorized(grpc::CallbackServerContext* ctx, Rpc rpc,
                                       const google::protobuf::Message& request, int cost,
                                       Body body) {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    Admit(ctx, rpc, request, cost,
          [reactor, body = std::move(body)](absl::StatusOr<PrincipalPtr> principal) mutable {
            if (!principal.ok()) {
              FinishWith(reactor, principal.status());
              return;
            }
            body(*std::move(principal), reactor);
          });
    return reactor;
  }
  static void FinishWith(grpc::ServerUnaryReactor* reactor, const absl::Status& status);
  // `request` (of `rpc`'s type) against limits_: its encoded size and its
  // item count.
  absl::Status CheckLimits(Rpc rpc, const google::protobuf::Message& request) const;
  // Runs `fn` (which must finish `reactor`) on the blocking pool; when the
  // pool's queue is full, finishes `reactor` with its RESOURCE_EXHAUSTED
  // instead and drops `fn` unrun.
  void RunBlocking(grpc::ServerUnaryReactor* reactor, std::function<void()> fn);

  const RequestLimits limits_;
  Shortener* shortener_;
  ThreadPool* blocking_pool_;
  InvalidationHub* hub_;
  Authorizer* authorizer_;
  KeyAdmin* key_admin_;
  ClickRecorder* clicks_;
  LinkStats* link_stats_;
  LinkLister* lister_;
  LinkRemover* remover_;
  RpcCounters counters_;
};

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_SHORTEN_SERVICE_H_
