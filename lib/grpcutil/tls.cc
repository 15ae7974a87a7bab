#include "lib/grpcutil/tls.h"

#include <errno.h>
#include <fcntl.h>
#include <grpcpp/create_channel.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/common/private_file.h"
#include "lib/common/status_macros.h"
#include "lib/grpcutil/api_key_channel.h"

namespace shortener::grpcutil {
namespace {

// A certificate chain is a few KB; the limit only stops a wrong path (a log,
// /dev/zero) from being read whole.
constexpr size_t kMaxPemBytes = 1 << 20;

constexpr char kTlsCert[] = "tls_cert";
constexpr char kTlsKey[] = "tls_key";
constexpr char kTlsClientCa[] = "tls_client_ca";
constexpr char kServiceTlsCa[] = "service_tls_ca";
constexpr char kServiceTlsCert[] = "service_tls_cert";
constexpr char kServiceTlsKey[] = "service_tls_key";
constexpr char kServiceTlsServerName[] = "service_tls_server_name";

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// OpenSSL keeps errors in a per-thread queue that gRPC's own TLS code reads
// later on the same thread: what our parsing left there would be blamed on
// an unrelated handshake. Every function that calls OpenSSL empties it.
class OpenSslErrorsCleared {
 public:
  OpenSslErrorsCleared() { ERR_clear_error(); }
  ~OpenSslErrorsCleared() { ERR_clear_error(); }
  OpenSslErrorsCleared(const OpenSslErrorsCleared&) = delete;
  OpenSslErrorsCleared& operator=(const OpenSslErrorsCleared&) = delete;
};

// Key material must not outlive its use in our buffers.
void Cleanse(std::string& secret) {
  if (!secret.empty()) OPENSSL_cleanse(secret.data(), secret.size());
  secret.clear();
}

absl::Status Invalid(absl::string_view flag, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", message));
}

BioPtr MemoryBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// Every CERTIFICATE block of `pem` must parse; there must be one at least.
// Returns the first (the leaf of a chain). Other blocks are skipped.
absl::StatusOr<X509Ptr> ParseCertificates(absl::string_view flag, const std::string& path,
                                          const std::string& pem) {
  OpenSslErrorsCleared cleared;
  BioPtr bio = MemoryBio(pem);
  if (bio == nullptr) return absl::ResourceExhaustedError("out of memory reading a certificate");
  X509Ptr first;
  int count = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    if (first == nullptr) {
      first.reset(cert);
    } else {
      X509_free(cert);
    }
    ++count;
  }
  // The loop ends with "no start line" once the data is used up; any other
  // error is a CERTIFICATE block that does not parse.
  const unsigned long error = ERR_peek_last_error();
  const bool at_end =
      ERR_GET_LIB(error) == ERR_LIB_PEM && ERR_GET_REASON(error) == PEM_R_NO_START_LINE;
  if (count == 0 && at_end) {
    return Invalid(flag, absl::StrCat("no PEM certificate (BEGIN CERTIFICATE) in ", path));
  }
  if (!at_end) {
    return Invalid(flag, absl::StrCat("certificate ", count + 1, " in ", path, " does not parse"));
  }
  return first;
}

// Declines to decrypt: OpenSSL's default would prompt on the terminal, and a
// service must not wait for a passphrase.
int NoPassphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*userdata*/) { return -1; }

absl::StatusOr<PkeyPtr> ParsePrivateKey(absl::string_view flag, const std::string& path,
                                        const std::string& pem) {
  OpenSslErrorsCleared cleared;
  if (absl::StrContains(pem, "ENCRYPTED")) {
    return Invalid(flag, absl::StrCat(path,
                                      " is an encrypted key; give an unencrypted one "
                                      "(openssl pkey -in KEY -out PLAIN_KEY)"));
  }
  BioPtr bio = MemoryBio(pem);
  if (bio == nullptr) return absl::ResourceExhaustedError("out of memory reading a key");
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (key == nullptr) {
    return Invalid(flag, absl::StrCat("no PEM private key (BEGIN PRIVATE KEY) in ", path));
  }
  return key;
}

struct KeyCertPair {
  std::string cert_chain;
  std::string private_key;
};

// Reads both files and checks that the key belongs to the first certificate,
// which is what a handshake would find out, only later and less clearly.
absl::StatusOr<KeyCertPair> LoadKeyCertPair(absl::string_view cert_flag,
                                            const std::string& cert_path,
                                            absl::string_view key_flag,
                                            const std::string& key_path) {
  KeyCertPair pair;
  SHORTENER_ASSIGN_OR_RETURN(pair.cert_chain, ReadPemFile(cert_flag, cert_path));
  SHORTENER_ASSIGN_OR_RETURN(X509Ptr leaf,
                             ParseCertificates(cert_flag, cert_path, pair.cert_chain));
  SHORTENER_ASSIGN_OR_RETURN(pair.private_key, ReadPemFile(key_flag, key_path));
  if (absl::Status mode = CheckSecretFile(key_path, absl::StrCat("--", key_flag)); !mode.ok()) {
    Cleanse(pair.private_key);
    return mode;
  }
  absl::StatusOr<PkeyPtr> key = ParsePrivateKey(key_flag, key_path, pair.private_key);
  if (!key.ok()) {
    Cleanse(pair.private_key);
    return key.status();
  }
  OpenSslErrorsCleared cleared;
  if (X509_check_private_key(leaf.get(), key->get()) != 1) {
    Cleanse(pair.private_key);
    return Invalid(key_flag,
                   absl::StrCat("the key in ", key_path, " does not match the certificate in ",
                                cert_path, " (--", cert_flag, ")"));
  }
  return pair;
}

// A CA file: read, and every certificate in it must parse.
absl::StatusOr<std::string> LoadCaFile(absl::string_view flag, const std::string& path) {
  SHORTENER_ASSIGN_OR_RETURN(std::string pem, ReadPemFile(flag, path));
  SHORTENER_RETURN_IF_ERROR(ParseCertificates(flag, path, pem).status());
  return pem;
}

absl::Status Needs(absl::string_view flag, absl::string_view needed, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("--", flag, " needs --", needed, " (", why, ")"));
}

}  // namespace

absl::string_view TlsModeName(TlsMode mode) {
  switch (mode) {
    case TlsMode::kPlaintext:
      return "plaintext";
    case TlsMode::kTls:
      return "TLS";
    case TlsMode::kMutualTls:
      return "mTLS";
  }
  return "unknown";
}

absl::StatusOr<std::string> ReadPemFile(absl::string_view flag, const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT)
      return absl::NotFoundError(absl::StrCat("--", flag, ": no such file ", path));
    return absl::ErrnoToStatus(error, absl::StrCat("--", flag, ": cannot open ", path));
  }
  // One byte more than allowed tells "too large" from "exactly at the limit".
  std::string content(kMaxPemBytes + 1, '\0');
  size_t size = 0;
  int error = 0;
  while (size < content.size()) {
    const ssize_t n = ::read(fd, content.data() + size, content.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    size += static_cast<size_t>(n);
  }
  ::close(fd);
  content.resize(size);
  absl::Status problem;
  if (error != 0) {
    problem = absl::ErrnoToStatus(error, absl::StrCat("--", flag, ": cannot read ", path));
  } else if (size > kMaxPemBytes) {
    problem = Invalid(flag, absl::StrCat(path, " is over 1 MiB: not a PEM file"));
  } else if (!absl::StrContains(content, "-----BEGIN ")) {
    problem = Invalid(flag, absl::StrCat(path, " is not a PEM file (no -----BEGIN line)"));
  }
  if (!problem.ok()) {
    Cleanse(content);  // it may have been a key
    return problem;
  }
  return content;
}

TlsMode ServerTlsModeOf(const ServerTlsOptions& options) {
  if (options.cert_file.empty()) return TlsMode::kPlaintext;
  return options.client_ca_file.empty() ? TlsMode::kTls : TlsMode::kMutualTls;
}

absl::Status ValidateServerTlsOptions(const ServerTlsOptions& options) {
  if (options.cert_file.empty()) {
    if (!options.key_file.empty()) {
      return Needs(kTlsKey, kTlsCert, "the certificate the key belongs to");
    }
    if (!options.client_ca_file.empty()) {
      return Needs(kTlsClientCa, kTlsCert, "client certificates are checked over TLS only");
    }
    return absl::OkStatus();
  }
  if (options.key_file.empty()) return Needs(kTlsCert, kTlsKey, "the certificate's private key");
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsOptions& options) {
  SHORTENER_RETURN_IF_ERROR(ValidateServerTlsOptions(options));
  if (ServerTlsModeOf(options) == TlsMode::kPlaintext) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl;
  if (!options.client_ca_file.empty()) {
    SHORTENER_ASSIGN_OR_RETURN(ssl.pem_root_certs,
                               LoadCaFile(kTlsClientCa, options.client_ca_file));
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  SHORTENER_ASSIGN_OR_RETURN(
      KeyCertPair pair, LoadKeyCertPair(kTlsCert, options.cert_file, kTlsKey, options.key_file));
  ssl.pem_key_cert_pairs.push_back({std::move(pair.private_key), std::move(pair.cert_chain)});
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::SslServerCredentials(ssl);
  // gRPC keeps its own copy.
  Cleanse(ssl.pem_key_cert_pairs.front().private_key);
  return credentials;
}

TlsMode ClientTlsModeOf(const ClientTlsOptions& options) {
  if (!options.cert_file.empty()) return TlsMode::kMutualTls;
  return options.ca_file.empty() ? TlsMode::kPlaintext : TlsMode::kTls;
}

absl::Status ValidateClientTlsOptions(const ClientTlsOptions& options) {
  if (options.cert_file.empty() && !options.key_file.empty()) {
    return Needs(kServiceTlsKey, kServiceTlsCert, "the certificate the key belongs to");
  }
  if (!options.cert_file.empty() && options.key_file.empty()) {
    return Needs(kServiceTlsCert, kServiceTlsKey, "the certificate's private key");
  }
  if (!options.server_name.empty() && ClientTlsModeOf(options) == TlsMode::kPlaintext) {
    return Needs(kServiceTlsServerName, kServiceTlsCa,
                 "the name is checked against the service's certificate, over TLS only");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const ClientTlsOptions& options) {
  SHORTENER_RETURN_IF_ERROR(ValidateClientTlsOptions(options));
  if (ClientTlsModeOf(options) == TlsMode::kPlaintext) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  // Without a CA file gRPC uses the system's roots.
  if (!options.ca_file.empty()) {
    SHORTENER_ASSIGN_OR_RETURN(ssl.pem_root_certs, LoadCaFile(kServiceTlsCa, options.ca_file));
  }
  if (!options.cert_file.empty()) {
    SHORTENER_ASSIGN_OR_RETURN(KeyCertPair pair, LoadKeyCertPair(kServiceTlsCert, options.cert_file,
                                                                 kServiceTlsKey, options.key_file));
    ssl.pem_cert_chain = std::move(pair.cert_chain);
    ssl.pem_private_key = std::move(pair.private_key);
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::SslCredentials(ssl);
  Cleanse(ssl.pem_private_key);  // gRPC keeps its own copy
  return credentials;
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> CreateClientChannel(const std::string& target,
                                                                   const ClientTlsOptions& options,
                                                                   grpc::ChannelArguments args,
                                                                   const std::string& api_key) {
  SHORTENER_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials,
                             MakeChannelCredentials(options));
  if (!options.server_name.empty()) args.SetSslTargetNameOverride(options.server_name);
  return CreateChannelWithApiKey(target, credentials, args, api_key);
}

}  // namespace shortener::grpcutil
