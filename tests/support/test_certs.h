// Certificates for TLS tests, made at test time by the openssl command-line
// tool (/usr/bin/openssl) in a temp dir that is deleted on destruction:
//   - a CA, and signed by it a server certificate with the subject
//     alternative names IP:127.0.0.1 and DNS:localhost, a server certificate
//     naming only DNS:shorten-service.test (for the server name override),
//     and a client certificate;
//   - an unrelated CA and a client certificate signed by it, for the
//     negative cases.
// EC P-256 keys, unencrypted, valid for two days. Creating a set runs openssl
// about ten times (~0.1 s).
// Not thread-safe to create; the paths may be read from any thread.
#ifndef SHORTENER_TESTS_SUPPORT_TEST_CERTS_H_
#define SHORTENER_TESTS_SUPPORT_TEST_CERTS_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/grpcutil/tls.h"

namespace shortener::testing {

class TestCerts {
 public:
  // The name the certificate of named_server_cert() carries (and nothing else).
  static constexpr char kOtherServerName[] = "shorten-service.test";

  // Makes the set. INTERNAL with openssl's output if a command fails.
  static absl::StatusOr<std::unique_ptr<TestCerts>> Create();
  ~TestCerts();
  TestCerts(const TestCerts&) = delete;
  TestCerts& operator=(const TestCerts&) = delete;

  const std::string& dir() const { return dir_; }
  // PEM files in dir().
  std::string ca_cert() const { return dir_ + "/ca.pem"; }
  std::string server_cert() const { return dir_ + "/server.pem"; }
  std::string server_key() const { return dir_ + "/server.key"; }
  std::string named_server_cert() const { return dir_ + "/named-server.pem"; }
  std::string named_server_key() const { return dir_ + "/named-server.key"; }
  std::string client_cert() const { return dir_ + "/client.pem"; }
  std::string client_key() const { return dir_ + "/client.key"; }
  std::string other_ca_cert() const { return dir_ + "/other-ca.pem"; }
  std::string other_client_cert() const { return dir_ + "/other-client.pem"; }
  std::string other_client_key() const { return dir_ + "/other-client.key"; }

  // The service with server_cert and requiring a client certificate of ca_cert.
  grpcutil::ServerTlsOptions ServerMutualTls() const;
  // The service with server_cert, no client certificate asked for.
  grpcutil::ServerTlsOptions ServerTls() const;
  // A client trusting ca_cert with client_cert: what an mTLS service accepts.
  grpcutil::ClientTlsOptions ClientMutualTls() const;
  // A client trusting ca_cert, without a certificate of its own.
  grpcutil::ClientTlsOptions ClientWithoutCert() const;
  // A client trusting ca_cert whose certificate comes from the other CA.
  grpcutil::ClientTlsOptions ClientFromOtherCa() const;

 private:
  explicit TestCerts(std::string dir) : dir_(std::move(dir)) {}
  // Runs /usr/bin/openssl with `args` in dir(); INTERNAL with its output on
  // failure.
  absl::Status OpenSsl(const std::vector<std::string>& args) const;
  absl::Status MakeCa(const std::string& name, const std::string& subject) const;
  absl::Status MakeLeaf(const std::string& name, const std::string& ca, const std::string& subject,
                        const std::string& extensions, int serial) const;

  std::string dir_;
};

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_TEST_CERTS_H_
