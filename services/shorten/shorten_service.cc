#include "services/shorten/shorten_service.h"

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
      public_message = "service temporarily unavailable (database unreachable); retry later, "
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

grpc::ServerUnaryReactor* FinishNow(grpc::CallbackServerContext* ctx,
                                    const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(ClientStatus(status));
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* ShortenServiceImpl::Shorten(grpc::CallbackServerContext* ctx,
                                                      const v1::ShortenRequest* request,
                                                      v1::ShortenResponse* response) {
  counters_.Count(Rpc::kShorten);
  absl::StatusOr<ShortenInput> input = FromProto(*request);
  if (!input.ok()) return FinishNow(ctx, input.status());
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  shortener_->Shorten(*input, DeadlineOf(ctx),
                      [reactor, response](absl::StatusOr<ShortenOutput> out) {
                        if (out.ok()) ToProto(*out, response);
                        reactor->Finish(ClientStatus(out.status()));
                      });
  return reactor;
}

grpc::ServerUnaryReactor* ShortenServiceImpl::BatchShorten(
    grpc::CallbackServerContext* ctx, const v1::BatchShortenRequest* request,
    v1::BatchShortenResponse* response) {
  counters_.Count(Rpc::kBatchShorten);
  std::vector<ShortenInput> inputs;
  inputs.reserve(request->requests_size());
  // An item whose proto cannot be decoded must still get its own error in its
  // own slot: decode failures are carried as a sentinel input that fails
  // validation with that message.
  std::vector<absl::Status> decode_errors(request->requests_size());
  for (int i = 0; i < request->requests_size(); ++i) {
    absl::StatusOr<ShortenInput> in = FromProto(request->requests(i));
    if (in.ok()) {
      inputs.push_back(*std::move(in));
    } else {
      decode_errors[i] = in.status();
      ShortenInput bad;
      bad.redirect_status = -1;  // rejected by validation; replaced below
      inputs.push_back(bad);
    }
  }
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  shortener_->BatchShorten(
      inputs, DeadlineOf(ctx),
      [reactor, response, decode_errors = std::move(decode_errors)](
          absl::StatusOr<std::vector<absl::StatusOr<ShortenOutput>>> results) {
        if (!results.ok()) {
          reactor->Finish(ClientStatus(results.status()));
          return;
        }
        for (size_t i = 0; i < results->size(); ++i) {
          v1::BatchShortenResult* r = response->add_results();
          absl::Status st = !decode_errors[i].ok() ? decode_errors[i] : (*results)[i].status();
          if (st.ok()) {
            ToProto(*(*results)[i], r->mutable_response());
          } else {
            grpc::Status item = ClientStatus(st);
            r->mutable_error()->set_code(static_cast<int>(item.error_code()));
            r->mutable_error()->set_message(item.error_message());
          }
        }
        reactor->Finish(grpc::Status::OK);
      });
  return reactor;
}

grpc::ServerUnaryReactor* ShortenServiceImpl::Resolve(grpc::CallbackServerContext* ctx,
                                                      const v1::ResolveRequest* request,
                                                      v1::ResolveResponse* response) {
  counters_.Count(Rpc::kResolve);
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  shortener_->Resolve(request->code(), [reactor, response](absl::StatusOr<LinkView> view) {
    if (view.ok()) ToProto(*view, response);
    reactor->Finish(ClientStatus(view.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* ShortenServiceImpl::BatchResolve(grpc::CallbackServerContext* ctx,
                                                           const v1::BatchResolveRequest* request,
                                                           v1::BatchResolveResponse* response) {
  counters_.Count(Rpc::kBatchResolve);
  constexpr int kMaxCodes = 1000;
  const int n = request->codes_size();
  if (n < 1 || n > kMaxCodes) {
    return FinishNow(ctx, absl::InvalidArgumentError(absl::StrCat(
                              "codes: BatchResolve takes 1 to ", kMaxCodes, " codes, got ", n)));
  }
  // Every slot exists before any lookup starts: callbacks on different
  // threads then each fill their own element and never touch the container.
  for (int i = 0; i < n; ++i) response->add_results();
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  auto remaining = std::make_shared<std::atomic<int>>(n);
  for (int i = 0; i < n; ++i) {
    // Concurrent lookups of generated codes share the read batcher's
    // queries, so the codes of one call mostly go out in one statement.
    shortener_->Resolve(request->codes(i), [reactor, response, remaining,
                                            i](absl::StatusOr<LinkView> view) {
      v1::BatchResolveResult* result = response->mutable_results(i);
      if (view.ok()) {
        ToProto(*view, result->mutable_response());
      } else {
        const grpc::Status item = ClientStatus(view.status());
        result->mutable_error()->set_code(static_cast<int>(item.error_code()));
        result->mutable_error()->set_message(item.error_message());
      }
      if (remaining->fetch_sub(1, std::memory_order_acq_rel) == 1) {
        reactor->Finish(grpc::Status::OK);
      }
    });
  }
  return reactor;
}

grpc::ServerUnaryReactor* ShortenServiceImpl::GetLink(grpc::CallbackServerContext* ctx,
                                                      const v1::GetLinkRequest* request,
                                                      v1::Link* response) {
  counters_.Count(Rpc::kGetLink);
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  shortener_->GetLink(request->code(), [reactor, response](absl::StatusOr<LinkView> view) {
    if (view.ok()) ToProto(*view, response);
    reactor->Finish(ClientStatus(view.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* ShortenServiceImpl::Revoke(grpc::CallbackServerContext* ctx,
                                                     const v1::RevokeRequest* request,
                                                     v1::Link* response) {
  counters_.Count(Rpc::kRevoke);
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  blocking_pool_->Schedule([this, reactor, request, response] {
    absl::StatusOr<LinkView> view = shortener_->Revoke(request->code());
    if (view.ok()) ToProto(*view, response);
    reactor->Finish(ClientStatus(view.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* ShortenServiceImpl::RecordClicks(grpc::CallbackServerContext* ctx,
                                                           const v1::RecordClicksRequest*,
                                                           v1::RecordClicksResponse*) {
  counters_.Count(Rpc::kRecordClicks);
  return FinishNow(ctx, absl::UnimplementedError("RecordClicks: click statistics are not implemented yet"));
}

grpc::ServerUnaryReactor* ShortenServiceImpl::GetClickStats(grpc::CallbackServerContext* ctx,
                                                            const v1::GetClickStatsRequest*,
                                                            v1::GetClickStatsResponse*) {
  counters_.Count(Rpc::kGetClickStats);
  return FinishNow(ctx, absl::UnimplementedError("GetClickStats: click statistics are not implemented yet"));
}

grpc::ServerWriteReactor<v1::Invalidation>* ShortenServiceImpl::WatchInvalidations(
    grpc::CallbackServerContext* ctx, const v1::WatchInvalidationsRequest* request) {
  counters_.Count(Rpc::kWatchInvalidations);
  return InvalidationStream::Start(ctx, hub_, request->subscriber());
}

}  // namespace shortener::service
