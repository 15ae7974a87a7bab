#include "services/shorten/shorten_service.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "services/shorten/client_status.h"
#include "services/shorten/invalidation_stream.h"
#include "services/shorten/proto_mapping.h"

namespace shortener::service {
namespace {

// The call's deadline, capped so that a client without one cannot make us
// wait forever for an id segment.
absl::Time DeadlineOf(const grpc::CallbackServerContext* ctx) {
  absl::Time cap = absl::Now() + absl::Seconds(30);
  absl::Time deadline = absl::FromChrono(ctx->deadline());
  return deadline < cap ? deadline : cap;
}

// Encodes `result` into `response` when it is OK, and finishes `reactor`
// with its status as the client may see it.
template <typename Result, typename Response>
void Answer(grpc::ServerUnaryReactor* reactor, Response* response, absl::StatusOr<Result> result) {
  if (result.ok()) ToProto(*std::move(result), response);
  reactor->Finish(ClientStatus(result.status()));
}

// Answer, as the callback of an asynchronous domain call.
template <typename Result, typename Response>
std::function<void(absl::StatusOr<Result>)> AnswerWith(grpc::ServerUnaryReactor* reactor,
                                                       Response* response) {
  return [reactor, response](absl::StatusOr<Result> result) {
    Answer(reactor, response, std::move(result));
  };
}

}  // namespace

void ShortenServiceImpl::FinishWith(grpc::ServerUnaryReactor* reactor, const absl::Status& status) {
  reactor->Finish(ClientStatus(status));
}

absl::Status ShortenServiceImpl::CheckLimits(Rpc rpc,
                                             const google::protobuf::Message& request) const {
  size_t items = 0;
  switch (rpc) {
    case Rpc::kBatchShorten:
      items = static_cast<const v1::BatchShortenRequest&>(request).requests_size();
      break;
    case Rpc::kBatchResolve:
      items = static_cast<const v1::BatchResolveRequest&>(request).codes_size();
      break;
    case Rpc::kRecordClicks:
      items = static_cast<const v1::RecordClicksRequest&>(request).events_size();
      break;
    default:
      break;
  }
  return limits_.Check(rpc, request.ByteSizeLong(), items);
}

void ShortenServiceImpl::Admit(grpc::CallbackServerContext* ctx, Rpc rpc,
                               const google::protobuf::Message& request, int cost,
                               Authorizer::Done done) {
  counters_.Count(rpc);
  // Before the key look-up: a request no client may send costs neither a
  // database read nor a token of anyone's rate.
  if (absl::Status within = CheckLimits(rpc, request); !within.ok()) {
    done(within);
    return;
  }
  authorizer_->Authorize(ctx, rpc, cost, std::move(done));
}

void ShortenServiceImpl::RunBlocking(grpc::ServerUnaryReactor* reactor, std::function<void()> fn) {
  absl::Status queued = blocking_pool_->Schedule(std::move(fn));
  if (!queued.ok()) FinishWith(reactor, queued);
}

grpc::ServerUnaryReactor* ShortenServiceImpl::Shorten(grpc::CallbackServerContext* ctx,
                                                      const v1::ShortenRequest* request,
                                                      v1::ShortenResponse* response) {
  return Authorized(
      ctx, Rpc::kShorten, *request, 1,
      [this, ctx, request, response](PrincipalPtr caller, grpc::ServerUnaryReactor* reactor) {
        absl::StatusOr<ShortenInput> input = FromProto(*request);
        if (!input.ok()) return FinishWith(reactor, input.status());
        input->caller = std::move(caller);
        shortener_->Shorten(*input, DeadlineOf(ctx), AnswerWith<ShortenOutput>(reactor, response));
      });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::BatchShorten(grpc::CallbackServerContext* ctx,
                                                           const v1::BatchShortenRequest* request,
                                                           v1::BatchShortenResponse* response) {
  // Each item counts against the key's rate, or one call would be a way
  // around it.
  const int items = std::max(1, request->requests_size());
  return Authorized(
      ctx, Rpc::kBatchShorten, *request, items,
      [this, ctx, request, response](PrincipalPtr caller, grpc::ServerUnaryReactor* reactor) {
        // An item that cannot be decoded still gets its own error in its own
        // slot: its decode error travels as the item.
        shortener_->BatchShorten(
            FromProto(*request, caller), DeadlineOf(ctx),
            AnswerWith<std::vector<absl::StatusOr<ShortenOutput>>>(reactor, response));
      });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::Resolve(grpc::CallbackServerContext* ctx,
                                                      const v1::ResolveRequest* request,
                                                      v1::ResolveResponse* response) {
  return Authorized(ctx, Rpc::kResolve, *request, 1,
                    [this, request, response](PrincipalPtr, grpc::ServerUnaryReactor* reactor) {
                      shortener_->Resolve(request->code(), AnswerWith<LinkView>(reactor, response));
                    });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::BatchResolve(grpc::CallbackServerContext* ctx,
                                                           const v1::BatchResolveRequest* request,
                                                           v1::BatchResolveResponse* response) {
  return Authorized(ctx, Rpc::kBatchResolve, *request, 1,
                    [this, request, response](PrincipalPtr, grpc::ServerUnaryReactor* reactor) {
                      shortener_->BatchResolve(
                          FromProto(*request),
                          AnswerWith<std::vector<absl::StatusOr<LinkView>>>(reactor, response));
                    });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::GetLink(grpc::CallbackServerContext* ctx,
                                                      const v1::GetLinkRequest* request,
                                                      v1::Link* response) {
  return Authorized(
      ctx, Rpc::kGetLink, *request, 1,
      [this, request, response](PrincipalPtr caller, grpc::ServerUnaryReactor* reactor) {
        link_stats_->GetLink(request->code(), std::move(caller),
                             AnswerWith<LinkWithClicks>(reactor, response), WantsHistory(*request));
      });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::ListLinks(grpc::CallbackServerContext* ctx,
                                                        const v1::ListLinksRequest* request,
                                                        v1::ListLinksResponse* response) {
  return Authorized(
      ctx, Rpc::kListLinks, *request, 1,
      [this, request, response](PrincipalPtr caller, grpc::ServerUnaryReactor* reactor) {
        lister_->List(FromProto(*request), std::move(caller),
                      AnswerWith<LinkListPage>(reactor, response));
      });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::GetQrCode(grpc::CallbackServerContext* ctx,
                                                        const v1::GetQrCodeRequest* request,
                                                        v1::QrCode* response) {
  return Authorized(
      ctx, Rpc::kGetQrCode, *request, 1,
      [this, request, response](PrincipalPtr caller, grpc::ServerUnaryReactor* reactor) {
        absl::StatusOr<QrQuery> query = FromProto(*request);
        if (!query.ok()) return FinishWith(reactor, query.status());
        link_stats_->GetQrCode(*query, std::move(caller),
                               AnswerWith<LinkQrCode>(reactor, response));
      });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::Revoke(grpc::CallbackServerContext* ctx,
                                                     const v1::RevokeRequest* request,
                                                     v1::Link* response) {
  return Authorized(
      ctx, Rpc::kRevoke, *request, 1,
      [this, request, response](PrincipalPtr caller, grpc::ServerUnaryReactor* reactor) {
        RunBlocking(reactor, [this, reactor, request, response, caller = std::move(caller)] {
          Answer(reactor, response, shortener_->Revoke(request->code(), caller.get()));
        });
      });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::UpdateLink(grpc::CallbackServerContext* ctx,
                                                         const v1::UpdateLinkRequest* request,
                                                         v1::Link* response) {
  return Authorized(
      ctx, Rpc::kUpdateLink, *request, 1,
      [this, request, response](PrincipalPtr caller, grpc::ServerUnaryReactor* reactor) {
        absl::StatusOr<LinkEdit> edit = FromProto(*request);
        if (!edit.ok()) return FinishWith(reactor, edit.status());
        RunBlocking(reactor,
                    [this, reactor, response, edit = *std::move(edit), caller = std::move(caller)] {
                      Answer(reactor, response, shortener_->UpdateLink(edit, caller.get()));
                    });
      });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::DeleteLink(grpc::CallbackServerContext* ctx,
                                                         const v1::DeleteLinkRequest* request,
                                                         google::protobuf::Empty*) {
  return Authorized(ctx, Rpc::kDeleteLink, *request, 1,
                    [this, request](PrincipalPtr caller, grpc::ServerUnaryReactor* reactor) {
                      RunBlocking(reactor, [this, reactor, request, caller = std::move(caller)] {
                        FinishWith(reactor, remover_->DeleteLink(request->code(), caller.get()));
                      });
                    });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::RevokeLinks(grpc::CallbackServerContext* ctx,
                                                          const v1::RevokeLinksRequest* request,
                                                          v1::RevokeLinksResponse* response) {
  return Authorized(
      ctx, Rpc::kRevokeLinks, *request, BulkCallCost(request->page_size()),
      [this, request, response](PrincipalPtr caller, grpc::ServerUnaryReactor* reactor) {
        RunBlocking(reactor, [this, reactor, request, response, caller = std::move(caller)] {
          Answer(reactor, response, remover_->RevokeLinks(FromProto(*request), caller.get()));
        });
      });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::DeleteLinks(grpc::CallbackServerContext* ctx,
                                                          const v1::DeleteLinksRequest* request,
                                                          v1::DeleteLinksResponse* response) {
  return Authorized(
      ctx, Rpc::kDeleteLinks, *request, BulkCallCost(request->page_size()),
      [this, request, response](PrincipalPtr caller, grpc::ServerUnaryReactor* reactor) {
        RunBlocking(reactor, [this, reactor, request, response, caller = std::move(caller)] {
          Answer(reactor, response, remover_->DeleteLinks(FromProto(*request), caller.get()));
        });
      });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::RecordClicks(grpc::CallbackServerContext* ctx,
                                                           const v1::RecordClicksRequest* request,
                                                           v1::RecordClicksResponse* response) {
  return Authorized(ctx, Rpc::kRecordClicks, *request, 1,
                    [this, request, response](PrincipalPtr, grpc::ServerUnaryReactor* reactor) {
                      // Alias look-ups and the store block: off the reactor thread.
                      RunBlocking(reactor, [this, reactor, request, response] {
                        Answer(reactor, response, clicks_->Record(FromProto(*request)));
                      });
                    });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::GetClickStats(grpc::CallbackServerContext* ctx,
                                                            const v1::GetClickStatsRequest* request,
                                                            v1::GetClickStatsResponse* response) {
  return Authorized(
      ctx, Rpc::kGetClickStats, *request, 1,
      [this, request, response](PrincipalPtr caller, grpc::ServerUnaryReactor* reactor) {
        absl::StatusOr<ClickStatsQuery> query = FromProto(*request);
        if (!query.ok()) return FinishWith(reactor, query.status());
        if (!request->filter().empty()) {
          return link_stats_->GetLabelStats(request->filter(), std::move(caller), *query,
                                            AnswerWith<clicks::ClickStats>(reactor, response));
        }
        link_stats_->GetClickStats(request->code(), std::move(caller), *query,
                                   AnswerWith<clicks::ClickStats>(reactor, response));
      });
}

grpc::ServerWriteReactor<v1::Invalidation>* ShortenServiceImpl::WatchInvalidations(
    grpc::CallbackServerContext* ctx, const v1::WatchInvalidationsRequest* request) {
  std::shared_ptr<InvalidationStream> stream =
      InvalidationStream::Create(ctx, hub_, request->subscriber());
  Admit(ctx, Rpc::kWatchInvalidations, *request, 1,
        [stream](absl::StatusOr<PrincipalPtr> principal) {
          if (principal.ok()) {
            stream->Subscribe();
          } else {
            stream->Reject(ClientStatus(principal.status()));
          }
        });
  return stream.get();
}

grpc::ServerUnaryReactor* ShortenServiceImpl::CreateApiKey(grpc::CallbackServerContext* ctx,
                                                           const v1::CreateApiKeyRequest* request,
                                                           v1::CreateApiKeyResponse* response) {
  return Authorized(ctx, Rpc::kCreateApiKey, *request, 1,
                    [this, request, response](PrincipalPtr, grpc::ServerUnaryReactor* reactor) {
                      RunBlocking(reactor, [this, reactor, request, response] {
                        Answer(reactor, response, key_admin_->Create(FromProto(*request)));
                      });
                    });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::ListApiKeys(grpc::CallbackServerContext* ctx,
                                                          const v1::ListApiKeysRequest* request,
                                                          v1::ListApiKeysResponse* response) {
  return Authorized(ctx, Rpc::kListApiKeys, *request, 1,
                    [this, response](PrincipalPtr, grpc::ServerUnaryReactor* reactor) {
                      RunBlocking(reactor, [this, reactor, response] {
                        Answer(reactor, response, key_admin_->List());
                      });
                    });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::RevokeApiKey(grpc::CallbackServerContext* ctx,
                                                           const v1::RevokeApiKeyRequest* request,
                                                           v1::ApiKey* response) {
  return Authorized(ctx, Rpc::kRevokeApiKey, *request, 1,
                    [this, request, response](PrincipalPtr, grpc::ServerUnaryReactor* reactor) {
                      RunBlocking(reactor, [this, reactor, request, response] {
                        Answer(reactor, response, key_admin_->Revoke(request->id()));
                      });
                    });
}

}  // namespace shortener::service
