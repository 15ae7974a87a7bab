// TLS on the gRPC connections between our binaries (shorten-service and its
// clients: redirect-edge, shortenctl). Turns the PEM files that flags name
// into gRPC server or channel credentials, checking them at start so that a
// missing file, a file of the wrong kind or a key that does not belong to its
// certificate stops the binary with one clear line instead of failing every
// handshake later. No TLS option set means plaintext, as before.
//
// Errors name the flag and the path, never the file's content (a key file
// passed where a certificate was expected must not end up in a log). The
// flag names are the ones every binary uses: the service's --tls_cert,
// --tls_key, --tls_client_ca; a client's --service_tls_ca,
// --service_tls_cert, --service_tls_key, --service_tls_server_name.
//
// Stateless functions; thread-safe.
#ifndef SHORTENER_LIB_GRPCUTIL_TLS_H_
#define SHORTENER_LIB_GRPCUTIL_TLS_H_

#include <grpcpp/channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::grpcutil {

enum class TlsMode {
  kPlaintext,
  kTls,        // the server proves who it is
  kMutualTls,  // and the client too, with a certificate
};

// "plaintext", "TLS" or "mTLS", for logs.
absl::string_view TlsModeName(TlsMode mode);

// The service's side. Paths of PEM files; empty means not given.
struct ServerTlsOptions {
  // --tls_cert: the server's certificate, optionally followed by its
  // intermediates. Default none: plaintext.
  std::string cert_file;
  // --tls_key: the unencrypted private key of cert_file. Required with it.
  // Checked as every secret file (CheckSecretFile, lib/common/private_file.h):
  // writable by other users stops the start, readable by them warns.
  std::string key_file;
  // --tls_client_ca: CA certificate(s). Given: every client must present a
  // certificate signed by one of them (mutual TLS). Default none: clients
  // are not asked for a certificate.
  std::string client_ca_file;
};

TlsMode ServerTlsModeOf(const ServerTlsOptions& options);

// Checks which options go together, without reading any file:
// INVALID_ARGUMENT naming the flag for a key without a certificate, a
// certificate without a key, or a client CA without a certificate.
absl::Status ValidateServerTlsOptions(const ServerTlsOptions& options);

// Insecure credentials when no option is set. Otherwise reads and checks the
// files: the certificate and client CA files must hold PEM certificates, the
// key file an unencrypted PEM private key matching the certificate. Fails
// with INVALID_ARGUMENT (bad combination, not PEM, mismatched key),
// NOT_FOUND (no such file) or the code of the errno that stopped the read
// (e.g. PERMISSION_DENIED); messages start with the flag.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsOptions& options);

// A client's side, towards the shorten-service.
struct ClientTlsOptions {
  // --service_tls_ca: CA certificate(s) the server's certificate must chain
  // to. Default none: plaintext, unless cert_file is set (then the system's
  // roots).
  std::string ca_file;
  // --service_tls_cert, --service_tls_key: the client's certificate and its
  // unencrypted key, for a service that requires one (mutual TLS). Default
  // none. The key file is checked as --tls_key is.
  std::string cert_file;
  std::string key_file;
  // --service_tls_server_name: the name the server's certificate must carry,
  // instead of the host of the target (for connecting by an address the
  // certificate does not name). Default: the target's host.
  std::string server_name;
};

TlsMode ClientTlsModeOf(const ClientTlsOptions& options);

// Checks which options go together, without reading any file:
// INVALID_ARGUMENT naming the flag for a key without a certificate, a
// certificate without a key, or a server name without TLS.
absl::Status ValidateClientTlsOptions(const ClientTlsOptions& options);

// Insecure credentials when TLS is off (ClientTlsModeOf is kPlaintext).
// Otherwise reads and checks the files as MakeServerCredentials does, with
// the same codes. The server name is not part of credentials: see
// CreateClientChannel.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const ClientTlsOptions& options);

// A channel to `target` with MakeChannelCredentials(options) and `args`,
// plus the server name override when options.server_name is set, whose
// calls carry `api_key` (none when empty; see api_key_channel.h). Fails as
// MakeChannelCredentials does; connecting happens later, as with any channel.
absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateClientChannel(const std::string& target,
                                                                   const ClientTlsOptions& options,
                                                                   grpc::ChannelArguments args = {},
                                                                   const std::string& api_key = "");

// Reads the PEM file `path` given by `flag` ("tls_cert", without dashes).
// NOT_FOUND when it does not exist; the errno's code when it cannot be read;
// INVALID_ARGUMENT when it is over 1 MiB or holds no PEM block. Messages
// start with "--flag: " and name the path.
absl::StatusOr<std::string> ReadPemFile(absl::string_view flag, const std::string& path);

}  // namespace shortener::grpcutil

#endif  // SHORTENER_LIB_GRPCUTIL_TLS_H_
