// A gRPC service of a test's own (a fake ShortenService, say) served on
// 127.0.0.1:<any free port> in this process, with a plaintext channel to
// it. The server is shut down with no grace on destruction: calls still in
// a handler are cancelled (handlers that wait should watch IsCancelled).
//
// Thread safety: the service's handlers run on gRPC threads; the rest is
// for the test's thread.
#ifndef SHORTENER_TESTS_SUPPORT_IN_PROCESS_SERVER_H_
#define SHORTENER_TESTS_SUPPORT_IN_PROCESS_SERVER_H_

#include <chrono>
#include <memory>
#include <string>

#include "grpcpp/channel.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"

namespace shortener::testing {

template <typename Service>
class InProcessServer {
 public:
  InProcessServer() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service);
    server_ = builder.BuildAndStart();
    channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port_),
                                  grpc::InsecureChannelCredentials());
  }
  ~InProcessServer() {
    if (server_ != nullptr) server_->Shutdown(std::chrono::system_clock::now());
  }
  InProcessServer(const InProcessServer&) = delete;
  InProcessServer& operator=(const InProcessServer&) = delete;

  bool started() const { return server_ != nullptr; }

  Service service;
  std::shared_ptr<grpc::Channel> channel;

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace shortener::testing

#endif  // SHORTENER_TESTS_SUPPORT_IN_PROCESS_SERVER_H_
