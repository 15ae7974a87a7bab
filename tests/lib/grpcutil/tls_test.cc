// lib/grpcutil/tls: option combinations, PEM files that are missing, not PEM
// or mismatched (with certificates the openssl tool makes for the test), and
// real handshakes against an in-process gRPC server: who gets in under TLS
// and mutual TLS, and the server name override.
#include "lib/grpcutil/tls.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "lib/grpcutil/api_key_channel.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/support/status_matchers.h"
#include "tests/support/test_certs.h"

namespace shortener::grpcutil {
namespace {

using ::shortener::testing::HasCode;
using ::shortener::testing::HasCodeAndMessage;
using ::shortener::testing::IsOk;
using ::shortener::testing::TestCerts;

std::unique_ptr<TestCerts> MakeCerts() {
  absl::StatusOr<std::unique_ptr<TestCerts>> certs = TestCerts::Create();
  if (!certs.ok()) FAIL(certs.status().ToString());
  return *std::move(certs);
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path) << content;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_CASE("TLS options that do not go together are refused naming the flag",
          "[lib/grpcutil][tls]") {
  ServerTlsOptions server;
  CHECK_THAT(ValidateServerTlsOptions(server), IsOk());
  CHECK(ServerTlsModeOf(server) == TlsMode::kPlaintext);
  server.key_file = "k.pem";
  CHECK_THAT(ValidateServerTlsOptions(server),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--tls_key needs --tls_cert"));
  server.key_file.clear();
  server.client_ca_file = "ca.pem";
  CHECK_THAT(
      ValidateServerTlsOptions(server),
      HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--tls_client_ca needs --tls_cert"));
  server.client_ca_file.clear();
  server.cert_file = "c.pem";
  CHECK_THAT(ValidateServerTlsOptions(server),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--tls_cert needs --tls_key"));
  server.key_file = "k.pem";
  CHECK_THAT(ValidateServerTlsOptions(server), IsOk());
  CHECK(ServerTlsModeOf(server) == TlsMode::kTls);
  server.client_ca_file = "ca.pem";
  CHECK(ServerTlsModeOf(server) == TlsMode::kMutualTls);

  ClientTlsOptions client;
  CHECK_THAT(ValidateClientTlsOptions(client), IsOk());
  CHECK(ClientTlsModeOf(client) == TlsMode::kPlaintext);
  client.key_file = "k.pem";
  CHECK_THAT(ValidateClientTlsOptions(client),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "--service_tls_key needs --service_tls_cert"));
  client.key_file.clear();
  client.cert_file = "c.pem";
  CHECK_THAT(ValidateClientTlsOptions(client),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "--service_tls_cert needs --service_tls_key"));
  client.cert_file.clear();
  client.server_name = "shorten.internal";
  CHECK_THAT(ValidateClientTlsOptions(client),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "--service_tls_server_name needs --service_tls_ca"));
  client.ca_file = "ca.pem";
  CHECK_THAT(ValidateClientTlsOptions(client), IsOk());
  CHECK(ClientTlsModeOf(client) == TlsMode::kTls);
  client.cert_file = "c.pem";
  client.key_file = "k.pem";
  CHECK(ClientTlsModeOf(client) == TlsMode::kMutualTls);

  CHECK(TlsModeName(TlsMode::kPlaintext) == "plaintext");
  CHECK(TlsModeName(TlsMode::kTls) == "TLS");
  CHECK(TlsModeName(TlsMode::kMutualTls) == "mTLS");
}

TEST_CASE("Credentials build from matching PEM files and plaintext needs none",
          "[lib/grpcutil][tls]") {
  std::unique_ptr<TestCerts> certs = MakeCerts();
  CHECK_THAT(MakeServerCredentials(certs->ServerTls()), IsOk());
  CHECK_THAT(MakeServerCredentials(certs->ServerMutualTls()), IsOk());
  CHECK_THAT(MakeChannelCredentials(certs->ClientWithoutCert()), IsOk());
  CHECK_THAT(MakeChannelCredentials(certs->ClientMutualTls()), IsOk());
  CHECK_THAT(MakeServerCredentials(ServerTlsOptions()), IsOk());
  CHECK_THAT(MakeChannelCredentials(ClientTlsOptions()), IsOk());
}

TEST_CASE("A private key others can write is refused; one others can read is accepted",
          "[lib/grpcutil][tls]") {
  std::unique_ptr<TestCerts> certs = MakeCerts();
  REQUIRE(::chmod(certs->server_key().c_str(), 0666) == 0);
  CHECK_THAT(MakeServerCredentials(certs->ServerTls()),
             HasCodeAndMessage(
                 absl::StatusCode::kFailedPrecondition,
                 "--tls_key: " + certs->server_key() + " is writable by other users (mode 0666)"));
  REQUIRE(::chmod(certs->client_key().c_str(), 0620) == 0);
  CHECK_THAT(MakeChannelCredentials(certs->ClientMutualTls()),
             HasCodeAndMessage(absl::StatusCode::kFailedPrecondition,
                               "--service_tls_key: " + certs->client_key() +
                                   " is writable by other users (mode 0620)"));
  // Readable by others: a warning (lib/common's test checks its text), not
  // a refusal. Certificates are public: their mode does not matter.
  REQUIRE(::chmod(certs->server_key().c_str(), 0644) == 0);
  REQUIRE(::chmod(certs->server_cert().c_str(), 0666) == 0);
  CHECK_THAT(MakeServerCredentials(certs->ServerTls()), IsOk());
  REQUIRE(::chmod(certs->client_key().c_str(), 0600) == 0);
  CHECK_THAT(MakeChannelCredentials(certs->ClientMutualTls()), IsOk());
}

TEST_CASE("An API key file others can write is refused naming it", "[lib/grpcutil][tls]") {
  std::unique_ptr<TestCerts> certs = MakeCerts();
  const std::string path = certs->dir() + "/edge.key";
  WriteFile(path, "shk_" + std::string(43, 'k') + "\n");
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  CHECK_THAT(ReadApiKeyFile("api_key_file", path), IsOk());
  REQUIRE(::chmod(path.c_str(), 0664) == 0);
  CHECK_THAT(
      ReadApiKeyFile("api_key_file", path),
      HasCodeAndMessage(absl::StatusCode::kFailedPrecondition,
                        "--api_key_file: " + path + " is writable by other users (mode 0664)"));
  CHECK_THAT(ReadApiKeyFile("api_key_file", certs->dir()),
             HasCodeAndMessage(
                 absl::StatusCode::kFailedPrecondition,
                 "--api_key_file: " + certs->dir() + " is not a regular file (a directory)"));
}

TEST_CASE("A missing PEM file is NOT_FOUND naming the flag and the path", "[lib/grpcutil][tls]") {
  std::unique_ptr<TestCerts> certs = MakeCerts();
  const std::string missing = certs->dir() + "/no-such.pem";

  ServerTlsOptions server = certs->ServerMutualTls();
  server.cert_file = missing;
  CHECK_THAT(MakeServerCredentials(server),
             HasCodeAndMessage(absl::StatusCode::kNotFound, "--tls_cert: no such file " + missing));
  server = certs->ServerMutualTls();
  server.key_file = missing;
  CHECK_THAT(MakeServerCredentials(server),
             HasCodeAndMessage(absl::StatusCode::kNotFound, "--tls_key: no such file " + missing));
  server = certs->ServerMutualTls();
  server.client_ca_file = missing;
  CHECK_THAT(MakeServerCredentials(server),
             HasCodeAndMessage(absl::StatusCode::kNotFound, "--tls_client_ca: no such file"));

  ClientTlsOptions client = certs->ClientMutualTls();
  client.ca_file = missing;
  CHECK_THAT(MakeChannelCredentials(client),
             HasCodeAndMessage(absl::StatusCode::kNotFound, "--service_tls_ca: no such file"));
  client = certs->ClientMutualTls();
  client.cert_file = missing;
  CHECK_THAT(MakeChannelCredentials(client),
             HasCodeAndMessage(absl::StatusCode::kNotFound, "--service_tls_cert: no such file"));
  client = certs->ClientMutualTls();
  client.key_file = missing;
  CHECK_THAT(MakeChannelCredentials(client),
             HasCodeAndMessage(absl::StatusCode::kNotFound, "--service_tls_key: no such file"));
  CHECK_THAT(CreateClientChannel("127.0.0.1:1", client), HasCode(absl::StatusCode::kNotFound));
}

TEST_CASE("A file that is not what its flag needs is refused without echoing it",
          "[lib/grpcutil][tls]") {
  std::unique_ptr<TestCerts> certs = MakeCerts();
  const std::string garbage = certs->dir() + "/garbage.pem";
  WriteFile(garbage, "not a certificate: SECRET-LOOKING-TEXT\n");

  ServerTlsOptions server = certs->ServerTls();
  server.cert_file = garbage;
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> refused = MakeServerCredentials(server);
  CHECK_THAT(refused, HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                        "--tls_cert: " + garbage + " is not a PEM file"));
  CHECK_FALSE(absl::StrContains(refused.status().message(), "SECRET-LOOKING-TEXT"));

  server = certs->ServerTls();
  server.key_file = garbage;
  CHECK_THAT(MakeServerCredentials(server),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "--tls_key: " + garbage));

  SECTION("a key where the certificate belongs is named, not shown") {
    server = certs->ServerTls();
    server.cert_file = certs->server_key();
    refused = MakeServerCredentials(server);
    CHECK_THAT(refused, HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                          "--tls_cert: no PEM certificate (BEGIN CERTIFICATE) in " +
                                              certs->server_key()));
    // Not one line of the key's base64 in the message.
    const std::string key = ReadFile(certs->server_key());
    const std::string key_line = key.substr(key.find('\n') + 1, 40);
    CHECK_FALSE(absl::StrContains(refused.status().message(), key_line));
  }
  SECTION("a certificate where the key belongs") {
    ClientTlsOptions client = certs->ClientMutualTls();
    client.key_file = certs->client_cert();
    CHECK_THAT(MakeChannelCredentials(client),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                 "--service_tls_key: no PEM private key"));
  }
  SECTION("a damaged certificate block") {
    const std::string pem = ReadFile(certs->ca_cert());
    std::string damaged = pem;
    damaged.replace(damaged.find('\n') + 10, 20, "!!!!!!!!!!!!!!!!!!!!");
    const std::string path = certs->dir() + "/damaged.pem";
    WriteFile(path, pem + damaged);  // the second of two does not parse
    ClientTlsOptions client = certs->ClientWithoutCert();
    client.ca_file = path;
    CHECK_THAT(MakeChannelCredentials(client),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                 "--service_tls_ca: certificate 2 in " + path + " does not parse"));
  }
  SECTION("an encrypted key, which would need a passphrase at start") {
    const std::string path = certs->dir() + "/encrypted.key";
    WriteFile(path,
              "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n");
    server = certs->ServerTls();
    server.key_file = path;
    CHECK_THAT(MakeServerCredentials(server),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                                 "--tls_key: " + path + " is an encrypted key"));
  }
  SECTION("an empty file and a directory") {
    const std::string empty = certs->dir() + "/empty.pem";
    WriteFile(empty, "");
    server = certs->ServerTls();
    server.cert_file = empty;
    CHECK_THAT(MakeServerCredentials(server),
               HasCodeAndMessage(absl::StatusCode::kInvalidArgument, "is not a PEM file"));
    server.cert_file = certs->dir();
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> dir = MakeServerCredentials(server);
    CHECK_FALSE(dir.ok());
    CHECK_THAT(dir,
               HasCodeAndMessage(dir.status().code(), "--tls_cert: cannot read " + certs->dir()));
  }
}

TEST_CASE("A key that does not match its certificate fails at start naming both files",
          "[lib/grpcutil][tls]") {
  std::unique_ptr<TestCerts> certs = MakeCerts();
  ServerTlsOptions server = certs->ServerMutualTls();
  server.key_file = certs->client_key();
  CHECK_THAT(MakeServerCredentials(server),
             HasCodeAndMessage(absl::StatusCode::kInvalidArgument,
                               "--tls_key: the key in " + certs->client_key() +
                                   " does not match the certificate in " + certs->server_cert() +
                                   " (--tls_cert)"));
  ClientTlsOptions client = certs->ClientMutualTls();
  client.key_file = certs->other_client_key();
  CHECK_THAT(MakeChannelCredentials(client),
             HasCodeAndMessage(
                 absl::StatusCode::kInvalidArgument,
                 "--service_tls_key: the key in " + certs->other_client_key() + " does not match"));
}

// An in-process server with the ShortenService's generated base class: every
// method answers UNIMPLEMENTED, so a call that gets that far has passed the
// handshake, and one that does not gets UNAVAILABLE.
class ProbeServer {
 public:
  explicit ProbeServer(const ServerTlsOptions& tls) {
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
        MakeServerCredentials(tls);
    REQUIRE_THAT(credentials, IsOk());
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", *credentials, &port_);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    REQUIRE(server_ != nullptr);
    REQUIRE(port_ != 0);
  }
  ~ProbeServer() { server_->Shutdown(std::chrono::system_clock::now()); }

  std::string target() const { return "127.0.0.1:" + std::to_string(port_); }

  // The code of one call through a new channel with `tls` to `target`.
  static grpc::StatusCode Call(const std::string& target, const ClientTlsOptions& tls) {
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = CreateClientChannel(target, tls);
    REQUIRE_THAT(channel, IsOk());
    std::unique_ptr<v1::ShortenService::Stub> stub = v1::ShortenService::NewStub(*channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ResolveResponse response;
    const grpc::Status status = stub->Resolve(&context, v1::ResolveRequest(), &response);
    INFO(status.error_message());
    return status.error_code();
  }
  grpc::StatusCode Call(const ClientTlsOptions& tls) const { return Call(target(), tls); }

 private:
  v1::ShortenService::Service service_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

constexpr grpc::StatusCode kGotThrough = grpc::StatusCode::UNIMPLEMENTED;
constexpr grpc::StatusCode kRefused = grpc::StatusCode::UNAVAILABLE;

TEST_CASE("A mutual TLS server lets in only clients with a certificate of its CA",
          "[lib/grpcutil][tls]") {
  std::unique_ptr<TestCerts> certs = MakeCerts();
  ProbeServer server(certs->ServerMutualTls());
  CHECK(server.Call(certs->ClientMutualTls()) == kGotThrough);
  CHECK(server.Call(certs->ClientWithoutCert()) == kRefused);
  CHECK(server.Call(certs->ClientFromOtherCa()) == kRefused);
  CHECK(server.Call(ClientTlsOptions()) == kRefused);  // plaintext
}

TEST_CASE("A TLS client checks the server certificate against its CA and name",
          "[lib/grpcutil][tls]") {
  std::unique_ptr<TestCerts> certs = MakeCerts();
  SECTION("without client certificates asked for, a CA is all a client needs") {
    ProbeServer server(certs->ServerTls());
    CHECK(server.Call(certs->ClientWithoutCert()) == kGotThrough);
    CHECK(server.Call(certs->ClientMutualTls()) == kGotThrough);
    ClientTlsOptions wrong_ca;
    wrong_ca.ca_file = certs->other_ca_cert();
    CHECK(server.Call(wrong_ca) == kRefused);
    CHECK(server.Call(ClientTlsOptions()) == kRefused);
  }
  SECTION("a certificate without the address needs the server name override") {
    ServerTlsOptions named;
    named.cert_file = certs->named_server_cert();
    named.key_file = certs->named_server_key();
    ProbeServer server(named);
    ClientTlsOptions client = certs->ClientWithoutCert();
    CHECK(server.Call(client) == kRefused);
    client.server_name = TestCerts::kOtherServerName;
    CHECK(server.Call(client) == kGotThrough);
    client.server_name = "localhost";
    CHECK(server.Call(client) == kRefused);
  }
  SECTION("a TLS client against a plaintext server") {
    ProbeServer server{ServerTlsOptions()};
    CHECK(server.Call(certs->ClientWithoutCert()) == kRefused);
    CHECK(server.Call(ClientTlsOptions()) == kGotThrough);
  }
}

}  // namespace
}  // namespace shortener::grpcutil
