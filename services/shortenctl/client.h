// ShortenClient: the ShortenService stub wrapped so that it owns deadlines
// and the API key. Connect waits for the connection (plaintext or TLS) up to
// the timeout (and fails at once when it is refused), then every call gets a
// deadline of its own and the key as `authorization: Bearer` metadata; errors
// come back as absl::Status with the server's code and message.
// Not thread-safe (shortenctl makes one call at a time); movable.
#ifndef SHORTENER_SERVICES_SHORTENCTL_CLIENT_H_
#define SHORTENER_SERVICES_SHORTENCTL_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/grpcutil/tls.h"
#include "shortener/v1/shortener.grpc.pb.h"

namespace shortener::ctl {

class ShortenClient {
 public:
  // Connects to `target` (HOST:PORT, or any gRPC target name) over plaintext,
  // or TLS as `tls` says; every call sends `api_key` (none when empty: the
  // service then answers UNAUTHENTICATED). UNAVAILABLE "cannot connect to
  // TARGET..." at once when the connection is refused, the name does not
  // resolve or the TLS handshake fails, or after `timeout` when the
  // connection is still not up (e.g. packets dropped). The errors of
  // grpcutil::MakeChannelCredentials when a TLS file is missing or bad.
  static absl::StatusOr<ShortenClient> Connect(const std::string& target,
                                               const grpcutil::ClientTlsOptions& tls,
                                               absl::Duration timeout, const std::string& api_key);

  // Each call: the RPC with a deadline of `timeout` from now; the server's
  // status (DEADLINE_EXCEEDED when the deadline passes) on failure, with
  // its `retry-after-ms` trailing metadata, when it has one, as the payload
  // kRetryAfterPayload (retry.h).
  absl::StatusOr<v1::ShortenResponse> Shorten(const v1::ShortenRequest& request);
  absl::StatusOr<v1::BatchShortenResponse> BatchShorten(const v1::BatchShortenRequest& request);
  absl::StatusOr<v1::ResolveResponse> Resolve(const v1::ResolveRequest& request);
  absl::StatusOr<v1::Link> GetLink(const v1::GetLinkRequest& request);
  absl::StatusOr<v1::QrCode> GetQrCode(const v1::GetQrCodeRequest& request);
  absl::StatusOr<v1::ListLinksResponse> ListLinks(const v1::ListLinksRequest& request);
  absl::StatusOr<v1::GetClickStatsResponse> GetClickStats(const v1::GetClickStatsRequest& request);
  absl::StatusOr<v1::Link> Revoke(const v1::RevokeRequest& request);
  absl::StatusOr<v1::Link> UpdateLink(const v1::UpdateLinkRequest& request);
  absl::Status DeleteLink(const v1::DeleteLinkRequest& request);
  absl::StatusOr<v1::RevokeLinksResponse> RevokeLinks(const v1::RevokeLinksRequest& request);
  absl::StatusOr<v1::DeleteLinksResponse> DeleteLinks(const v1::DeleteLinksRequest& request);
  absl::StatusOr<v1::CreateApiKeyResponse> CreateApiKey(const v1::CreateApiKeyRequest& request);
  absl::StatusOr<v1::ListApiKeysResponse> ListApiKeys(const v1::ListApiKeysRequest& request);
  absl::StatusOr<v1::ApiKey> RevokeApiKey(const v1::RevokeApiKeyRequest& request);

 private:
  ShortenClient(std::unique_ptr<v1::ShortenService::Stub> stub, absl::Duration timeout)
      : stub_(std::move(stub)), timeout_(timeout) {}

  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(grpc::Status (v1::ShortenService::Stub::*method)(
                                    grpc::ClientContext*, const Request&, Response*),
                                const Request& request);

  std::unique_ptr<v1::ShortenService::Stub> stub_;
  absl::Duration timeout_;
};

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_CLIENT_H_
