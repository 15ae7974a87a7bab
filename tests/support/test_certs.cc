#include "tests/support/test_certs.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/common/status_macros.h"
#include "tests/support/orphan_reaper.h"
#include "tests/support/subprocess.h"

namespace shortener::testing {
namespace {

constexpr char kOpenSsl[] = "/usr/bin/openssl";

// Our own config: the system's openssl.cnf adds extensions of its choosing
// (and differs between machines). Sections are picked with -extensions.
constexpr char kConfig[] = R"([req]
distinguished_name = dn
prompt = no
[dn]
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, DNS:localhost
[named_server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:shorten-service.test
[client_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
)";

}  // namespace

absl::StatusOr<std::unique_ptr<TestCerts>> TestCerts::Create() {
  SHORTENER_ASSIGN_OR_RETURN(std::string dir, MakeOwnedTempDir("shortener-certs-"));
  std::unique_ptr<TestCerts> certs(new TestCerts(std::move(dir)));
  std::ofstream(certs->dir_ + "/openssl.cnf") << kConfig;
  SHORTENER_RETURN_IF_ERROR(certs->MakeCa("ca", "/CN=shortener test CA"));
  SHORTENER_RETURN_IF_ERROR(certs->MakeLeaf("server", "ca", "/CN=localhost", "server_ext", 2));
  SHORTENER_RETURN_IF_ERROR(
      certs->MakeLeaf("named-server", "ca", "/CN=shorten-service.test", "named_server_ext", 3));
  SHORTENER_RETURN_IF_ERROR(certs->MakeLeaf("client", "ca", "/CN=test client", "client_ext", 4));
  SHORTENER_RETURN_IF_ERROR(certs->MakeCa("other-ca", "/CN=unrelated test CA"));
  SHORTENER_RETURN_IF_ERROR(
      certs->MakeLeaf("other-client", "other-ca", "/CN=stranger", "client_ext", 5));
  return certs;
}

TestCerts::~TestCerts() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

absl::Status TestCerts::OpenSsl(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {kOpenSsl};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string log = dir_ + "/openssl.log";
  std::filesystem::remove(log);
  SHORTENER_ASSIGN_OR_RETURN(Subprocess child, Subprocess::Spawn(argv, log));
  const std::optional<int> code = child.Wait(absl::Seconds(20));
  if (code != 0) {
    return absl::InternalError(absl::StrCat(absl::StrJoin(argv, " "), " failed (exit ",
                                            code.value_or(-1), "):\n", ReadTextFile(log)));
  }
  return absl::OkStatus();
}

absl::Status TestCerts::MakeCa(const std::string& name, const std::string& subject) const {
  const std::string base = dir_ + "/" + name;
  // Options and their values in pairs (clang-format would put one word a line).
  // clang-format off
  return OpenSsl({"req", "-x509", "-config", dir_ + "/openssl.cnf", "-extensions", "ca_ext",
                  "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                  "-keyout", base + ".key", "-out", base + ".pem",
                  "-days", "2", "-subj", subject, "-set_serial", "1"});
  // clang-format on
}

absl::Status TestCerts::MakeLeaf(const std::string& name, const std::string& ca,
                                 const std::string& subject, const std::string& extensions,
                                 int serial) const {
  const std::string base = dir_ + "/" + name;
  const std::string ca_base = dir_ + "/" + ca;
  // clang-format off
  SHORTENER_RETURN_IF_ERROR(OpenSsl({"req", "-new", "-config", dir_ + "/openssl.cnf",
                                     "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                     "-nodes", "-keyout", base + ".key", "-out", base + ".csr",
                                     "-subj", subject}));
  return OpenSsl({"x509", "-req", "-in", base + ".csr",
                  "-CA", ca_base + ".pem", "-CAkey", ca_base + ".key",
                  "-set_serial", std::to_string(serial), "-days", "2",
                  "-extfile", dir_ + "/openssl.cnf", "-extensions", extensions,
                  "-out", base + ".pem"});
  // clang-format on
}

grpcutil::ServerTlsOptions TestCerts::ServerMutualTls() const {
  grpcutil::ServerTlsOptions options = ServerTls();
  options.client_ca_file = ca_cert();
  return options;
}

grpcutil::ServerTlsOptions TestCerts::ServerTls() const {
  grpcutil::ServerTlsOptions options;
  options.cert_file = server_cert();
  options.key_file = server_key();
  return options;
}

grpcutil::ClientTlsOptions TestCerts::ClientMutualTls() const {
  grpcutil::ClientTlsOptions options = ClientWithoutCert();
  options.cert_file = client_cert();
  options.key_file = client_key();
  return options;
}

grpcutil::ClientTlsOptions TestCerts::ClientWithoutCert() const {
  grpcutil::ClientTlsOptions options;
  options.ca_file = ca_cert();
  return options;
}

grpcutil::ClientTlsOptions TestCerts::ClientFromOtherCa() const {
  grpcutil::ClientTlsOptions options = ClientWithoutCert();
  options.cert_file = other_client_cert();
  options.key_file = other_client_key();
  return options;
}

}  // namespace shortener::testing
