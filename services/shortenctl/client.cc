#include "services/shortenctl/client.h"

#include <grpcpp/grpcpp.h>

#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/grpcutil/api_key_channel.h"
#include "lib/grpcutil/status.h"
#include "services/shortenctl/retry.h"

namespace shortener::ctl {
namespace {

// Waits until `channel` is READY. A channel that falls into
// TRANSIENT_FAILURE has just failed a connection attempt (refused, no such
// host): report that now instead of sitting in reconnect backoff until the
// deadline, so a dead service is a quick, clear UNAVAILABLE.
// gRPC does not tell a refused connection from a failed TLS handshake, so
// with TLS the message names both.
absl::Status WaitForReady(grpc::Channel& channel, const std::string& target, bool tls,
                          absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  grpc_connectivity_state state = channel.GetState(/*try_to_connect=*/true);
  while (state != GRPC_CHANNEL_READY) {
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE || state == GRPC_CHANNEL_SHUTDOWN) {
      return absl::UnavailableError(
          absl::StrCat("cannot connect to ", target,
                       tls ? " (connection refused, unknown host, or TLS handshake failed: check "
                             "--service_tls_ca, --service_tls_cert and the service's certificate)"
                           : " (connection refused or unknown host)"));
    }
    if (!channel.WaitForStateChange(state, absl::ToChronoTime(deadline))) {
      return absl::UnavailableError(
          absl::StrCat("cannot connect to ", target, " within ", absl::FormatDuration(timeout)));
    }
    state = channel.GetState(/*try_to_connect=*/true);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ShortenClient> ShortenClient::Connect(const std::string& target,
                                                     const grpcutil::ClientTlsOptions& tls,
                                                     absl::Duration timeout,
                                                     const std::string& api_key) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      grpcutil::CreateClientChannel(target, tls, grpc::ChannelArguments(), api_key);
  if (!channel.ok()) return channel.status();
  const bool with_tls = grpcutil::ClientTlsModeOf(tls) != grpcutil::TlsMode::kPlaintext;
  absl::Status ready = WaitForReady(**channel, target, with_tls, timeout);
  if (!ready.ok()) return ready;
  return ShortenClient(v1::ShortenService::NewStub(*channel), timeout);
}

template <typename Request, typename Response>
absl::StatusOr<Response> ShortenClient::Call(grpc::Status (v1::ShortenService::Stub::*method)(
                                                 grpc::ClientContext*, const Request&, Response*),
                                             const Request& request) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
  Response response;
  grpc::Status status = (stub_.get()->*method)(&context, request, &response);
  if (!status.ok()) {
    absl::Status error = grpcutil::FromGrpcStatus(status);
    // A rate limit's wait (retry.h): import and export honour it.
    const auto& trailers = context.GetServerTrailingMetadata();
    if (auto it = trailers.find("retry-after-ms"); it != trailers.end()) {
      error.SetPayload(kRetryAfterPayload,
                       absl::Cord(std::string(it->second.data(), it->second.size())));
    }
    return error;
  }
  return response;
}

absl::StatusOr<v1::ShortenResponse> ShortenClient::Shorten(const v1::ShortenRequest& request) {
  return Call(&v1::ShortenService::Stub::Shorten, request);
}

absl::StatusOr<v1::BatchShortenResponse> ShortenClient::BatchShorten(
    const v1::BatchShortenRequest& request) {
  return Call(&v1::ShortenService::Stub::BatchShorten, request);
}

absl::StatusOr<v1::ResolveResponse> ShortenClient::Resolve(const v1::ResolveRequest& request) {
  return Call(&v1::ShortenService::Stub::Resolve, request);
}

absl::StatusOr<v1::Link> ShortenClient::GetLink(const v1::GetLinkRequest& request) {
  return Call(&v1::ShortenService::Stub::GetLink, request);
}

absl::StatusOr<v1::QrCode> ShortenClient::GetQrCode(const v1::GetQrCodeRequest& request) {
  return Call(&v1::ShortenService::Stub::GetQrCode, request);
}

absl::StatusOr<v1::Link> ShortenClient::UpdateLink(const v1::UpdateLinkRequest& request) {
  return Call(&v1::ShortenService::Stub::UpdateLink, request);
}

absl::StatusOr<v1::ListLinksResponse> ShortenClient::ListLinks(
    const v1::ListLinksRequest& request) {
  return Call(&v1::ShortenService::Stub::ListLinks, request);
}

absl::StatusOr<v1::GetClickStatsResponse> ShortenClient::GetClickStats(
    const v1::GetClickStatsRequest& request) {
  return Call(&v1::ShortenService::Stub::GetClickStats, request);
}

absl::StatusOr<v1::Link> ShortenClient::Revoke(const v1::RevokeRequest& request) {
  return Call(&v1::ShortenService::Stub::Revoke, request);
}

absl::Status ShortenClient::DeleteLink(const v1::DeleteLinkRequest& request) {
  return Call(&v1::ShortenService::Stub::DeleteLink, request).status();
}

absl::StatusOr<v1::RevokeLinksResponse> ShortenClient::RevokeLinks(
    const v1::RevokeLinksRequest& request) {
  return Call(&v1::ShortenService::Stub::RevokeLinks, request);
}

absl::StatusOr<v1::DeleteLinksResponse> ShortenClient::DeleteLinks(
    const v1::DeleteLinksRequest& request) {
  return Call(&v1::ShortenService::Stub::DeleteLinks, request);
}

absl::StatusOr<v1::CreateApiKeyResponse> ShortenClient::CreateApiKey(
    const v1::CreateApiKeyRequest& request) {
  return Call(&v1::ShortenService::Stub::CreateApiKey, request);
}

absl::StatusOr<v1::ListApiKeysResponse> ShortenClient::ListApiKeys(
    const v1::ListApiKeysRequest& request) {
  return Call(&v1::ShortenService::Stub::ListApiKeys, request);
}

absl::StatusOr<v1::ApiKey> ShortenClient::RevokeApiKey(const v1::RevokeApiKeyRequest& request) {
  return Call(&v1::ShortenService::Stub::RevokeApiKey, request);
}

}  // namespace shortener::ctl
