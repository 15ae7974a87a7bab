#include "services/shorten/shorten_service.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/common/log.h"
#include "lib/grpcutil/status.h"
#include "services/shorten/invalidation_stream.h"
#include "services/shorten/proto_mapping.h"

namespace shortener::service {
namespace {

// What a client may see of an error. Our own messages (invalid input, not
// found, already exists) go out as they are; database and internal failures
// carry libpq/server text (socket paths, role and constraint names), so the
// detail goes to the log and the client gets the code with a plain message.
grpc::Status ClientStatus(const absl::Status& status) {
  absl::string_view public_message;
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      public_message =
          "service temporarily unavailable (database unreachable); retry later, "
          "with the same request_id for Shorten";
      break;
    case absl::StatusCode::kDeadlineExceeded:
      public_message = "deadline exceeded waiting for the database";
      break;
    case absl::StatusCode::kAborted:
      public_message = "conflicting concurrent writes; retry";
      break;
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDataLoss:
      public_message = "internal error";
      break;
    default:
      return grpcutil::ToGrpcStatus(status);
  }
  LogWarning("rpc failed: %s", status.ToString());
  return grpcutil::ToGrpcStatus(absl::Status(status.code(), public_message));
}

// The call's deadline, capped so that a client without one cannot make us
// wait forever for an id segment.
absl::Time DeadlineOf(const grpc::CallbackServerContext* ctx) {
  absl::Time cap = absl::Now() + absl::Seconds(30);
  absl::Time deadline = absl::FromChrono(ctx->deadline());
  return deadline < cap ? deadline : cap;
}

void SetItemError(const absl::Status& status, v1::ItemError* error) {
  const grpc::Status item = ClientStatus(status);
  error->set_code(static_cast<int>(item.error_code()));
  error->set_message(item.error_message());
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
        shortener_->Shorten(*input, DeadlineOf(ctx),
                            [reactor, response](absl::StatusOr<ShortenOutput> out) {
                              if (out.ok()) ToProto(*std::move(out), response);
                              FinishWith(reactor, out.status());
                            });
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
        // An item whose proto cannot be decoded still gets its own error in its
        // own slot.
        BatchShortenInputs batch = FromProto(*request, caller);
        shortener_->BatchShorten(
            std::move(batch.inputs), DeadlineOf(ctx),
            [reactor, response, decode_errors = std::move(batch.decode_errors)](
                absl::StatusOr<std::vector<absl::StatusOr<ShortenOutput>>> results) {
              if (!results.ok()) return FinishWith(reactor, results.status());
              for (size_t i = 0; i < results->size(); ++i) {
                v1::BatchShortenResult* r = response->add_results();
                absl::Status st =
                    !decode_errors[i].ok() ? decode_errors[i] : (*results)[i].status();
                if (st.ok()) {
                  ToProto(*std::move((*results)[i]), r->mutable_response());
                } else {
                  SetItemError(st, r->mutable_error());
                }
              }
              reactor->Finish(grpc::Status::OK);
            });
      });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::Resolve(grpc::CallbackServerContext* ctx,
                                                      const v1::ResolveRequest* request,
                                                      v1::ResolveResponse* response) {
  return Authorized(ctx, Rpc::kResolve, *request, 1,
                    [this, request, response](PrincipalPtr, grpc::ServerUnaryReactor* reactor) {
                      shortener_->Resolve(request->code(),
                                          [reactor, response](absl::StatusOr<LinkView> view) {
                                            if (view.ok()) ToProto(*view, response);
                                            FinishWith(reactor, view.status());
                                          });
                    });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::BatchResolve(grpc::CallbackServerContext* ctx,
                                                           const v1::BatchResolveRequest* request,
                                                           v1::BatchResolveResponse* response) {
  return Authorized(
      ctx, Rpc::kBatchResolve, *request, 1,
      [this, request, response](PrincipalPtr, grpc::ServerUnaryReactor* reactor) {
        constexpr int kMaxCodes = static_cast<int>(kMaxBatchItems);
        const int n = request->codes_size();
        if (n < 1 || n > kMaxCodes) {
          return FinishWith(
              reactor, absl::InvalidArgumentError(absl::StrCat("codes: BatchResolve takes 1 to ",
                                                               kMaxCodes, " codes, got ", n)));
        }
        // Every slot exists before any lookup starts: callbacks on different
        // threads then each fill their own element and never touch the container.
        for (int i = 0; i < n; ++i) response->add_results();
        auto remaining = std::make_shared<std::atomic<int>>(n);
        for (int i = 0; i < n; ++i) {
          // Concurrent lookups of generated codes share the read batcher's
          // queries, so the codes of one call mostly go out in one statement.
          shortener_->Resolve(request->codes(i),
                              [reactor, response, remaining, i](absl::StatusOr<LinkView> view) {
                                v1::BatchResolveResult* result = response->mutable_results(i);
                                if (view.ok()) {
                                  ToProto(*view, result->mutable_response());
                                } else {
                                  SetItemError(view.status(), result->mutable_error());
                                }
                                if (remaining->fetch_sub(1, std::memory_order_acq_rel) == 1) {
                                  reactor->Finish(grpc::Status::OK);
                                }
                              });
        }
      });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::GetLink(grpc::CallbackServerContext* ctx,
                                                      const v1::GetLinkRequest* request,
                                                      v1::Link* response) {
  return Authorized(
      ctx, Rpc::kGetLink, *request, 1,
      [this, request, response](PrincipalPtr caller, grpc::ServerUnaryReactor* reactor) {
        const auth::Principal* who = caller.get();
        shortener_->GetLink(
            request->code(), who,
            [this, reactor, response, caller = std::move(caller)](absl::StatusOr<LinkView> view) {
              if (!view.ok()) {
                FinishWith(reactor, view.status());
                return;
              }
              ToProto(*view, response);
              // The click count is a second read (of click_counts): blocking, so
              // on the pool. If it fails the whole call does (UNAVAILABLE, as
              // the link's own read would), rather than report 0 clicks.
              RunBlocking(reactor, [this, reactor, response, link_id = view->link.id] {
                absl::StatusOr<int64_t> total = click_store_->HumanTotal(link_id);
                if (total.ok()) response->set_click_count(*total);
                FinishWith(reactor, total.status());
              });
            });
      });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::Revoke(grpc::CallbackServerContext* ctx,
                                                     const v1::RevokeRequest* request,
                                                     v1::Link* response) {
  return Authorized(
      ctx, Rpc::kRevoke, *request, 1,
      [this, request, response](PrincipalPtr caller, grpc::ServerUnaryReactor* reactor) {
        RunBlocking(reactor, [this, reactor, request, response, caller = std::move(caller)] {
          absl::StatusOr<LinkView> view = shortener_->Revoke(request->code(), caller.get());
          if (view.ok()) ToProto(*view, response);
          FinishWith(reactor, view.status());
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
                        absl::StatusOr<RecordClicksOutput> out =
                            clicks_->Record(FromProto(*request));
                        if (out.ok()) ToProto(*out, response);
                        FinishWith(reactor, out.status());
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
        if (!query.ok()) {
          FinishWith(reactor, query.status());
          return;
        }
        absl::StatusOr<clicks::StatsRange> range =
            clicks::ResolveStatsRange(query->start, query->end, query->granularity, absl::Now());
        if (!range.ok()) {
          FinishWith(reactor, range.status());
          return;
        }
        // Ownership first, as GetLink: another tenant's link is NOT_FOUND, word
        // for word as a code that does not exist.
        const auth::Principal* who = caller.get();
        shortener_->GetLink(
            request->code(), who,
            [this, reactor, response, range = *range,
             caller = std::move(caller)](absl::StatusOr<LinkView> view) {
              if (!view.ok()) {
                FinishWith(reactor, view.status());
                return;
              }
              RunBlocking(reactor, [this, reactor, response, range, link_id = view->link.id] {
                absl::StatusOr<clicks::ClickStats> stats =
                    click_store_->Stats(link_id, range.start, range.end, range.granularity);
                if (stats.ok()) ToProto(*stats, response);
                FinishWith(reactor, stats.status());
              });
            });
      });
}

grpc::ServerWriteReactor<v1::Invalidation>* ShortenServiceImpl::WatchInvalidations(
    grpc::CallbackServerContext* ctx, const v1::WatchInvalidationsRequest* request) {
  counters_.Count(Rpc::kWatchInvalidations);
  std::shared_ptr<InvalidationStream> stream =
      InvalidationStream::Create(ctx, hub_, request->subscriber());
  if (absl::Status within = CheckLimits(Rpc::kWatchInvalidations, *request); !within.ok()) {
    stream->Reject(ClientStatus(within));
    return stream.get();
  }
  authorizer_->Authorize(ctx, Rpc::kWatchInvalidations, 1,
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
                        absl::StatusOr<CreatedApiKey> created =
                            key_admin_->Create(FromProto(*request));
                        if (created.ok()) {
                          response->set_key(created->key);
                          ToProto(created->record, response->mutable_api_key());
                        }
                        FinishWith(reactor, created.status());
                      });
                    });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::ListApiKeys(grpc::CallbackServerContext* ctx,
                                                          const v1::ListApiKeysRequest* request,
                                                          v1::ListApiKeysResponse* response) {
  return Authorized(ctx, Rpc::kListApiKeys, *request, 1,
                    [this, response](PrincipalPtr, grpc::ServerUnaryReactor* reactor) {
                      RunBlocking(reactor, [this, reactor, response] {
                        absl::StatusOr<std::vector<auth::ApiKeyRecord>> keys = key_admin_->List();
                        if (keys.ok()) {
                          for (const auth::ApiKeyRecord& key : *keys)
                            ToProto(key, response->add_api_keys());
                        }
                        FinishWith(reactor, keys.status());
                      });
                    });
}

grpc::ServerUnaryReactor* ShortenServiceImpl::RevokeApiKey(grpc::CallbackServerContext* ctx,
                                                           const v1::RevokeApiKeyRequest* request,
                                                           v1::ApiKey* response) {
  return Authorized(ctx, Rpc::kRevokeApiKey, *request, 1,
                    [this, request, response](PrincipalPtr, grpc::ServerUnaryReactor* reactor) {
                      RunBlocking(reactor, [this, reactor, request, response] {
                        absl::StatusOr<auth::ApiKeyRecord> revoked =
                            key_admin_->Revoke(request->id());
                        if (revoked.ok()) ToProto(*revoked, response);
                        FinishWith(reactor, revoked.status());
                      });
                    });
}

}  // namespace shortener::service
