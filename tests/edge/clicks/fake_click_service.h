// An in-process ShortenService that implements RecordClicks only, for the
// click sender's tests: it deduplicates batches by id as the real service
// does, records every call's batch id, and fails calls on demand.
//
// Thread safety: RecordClicks runs on gRPC threads; everything else is
// called by the test thread; all under one mutex.
#ifndef SHORTENER_TESTS_EDGE_CLICKS_FAKE_CLICK_SERVICE_H_
#define SHORTENER_TESTS_EDGE_CLICKS_FAKE_CLICK_SERVICE_H_

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "shortener/v1/shortener.grpc.pb.h"

namespace shortener::edge {

class FakeClickService final : public v1::ShortenService::Service {
 public:
  grpc::Status RecordClicks(grpc::ServerContext*, const v1::RecordClicksRequest* request,
                            v1::RecordClicksResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(request->batch_id());
    if (fail_next_ > 0) {
      --fail_next_;
      return grpc::Status(fail_code_, "injected failure");
    }
    if (down_) return grpc::Status(fail_code_, "injected outage");
    if (batches_.count(request->batch_id()) == 0) {
      batches_[request->batch_id()] = *request;
      order_.push_back(request->batch_id());
      response->set_accepted(request->events_size());
    }
    if (lose_ack_next_ > 0) {
      --lose_ack_next_;
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "injected: recorded, answer lost");
    }
    return grpc::Status::OK;
  }

  // The next `n` calls fail with `code`.
  void FailNext(int n, grpc::StatusCode code = grpc::StatusCode::UNAVAILABLE) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_next_ = n;
    fail_code_ = code;
  }
  // The next `n` calls are recorded but answered UNAVAILABLE (a lost answer).
  void LoseAckNext(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    lose_ack_next_ = n;
  }
  // Every call fails with `code` while down.
  void SetDown(bool down, grpc::StatusCode code = grpc::StatusCode::UNAVAILABLE) {
    std::lock_guard<std::mutex> lock(mu_);
    down_ = down;
    fail_code_ = code;
  }
  // Batch ids of every call, failed ones included, in arrival order.
  std::vector<std::string> Calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  // Batch ids recorded (first arrival of each), in order.
  std::vector<std::string> Recorded() const {
    std::lock_guard<std::mutex> lock(mu_);
    return order_;
  }
  // Event codes recorded, in batch order.
  std::vector<std::string> RecordedCodes() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> codes;
    for (const std::string& id : order_) {
      for (const v1::ClickEvent& e : batches_.at(id).events()) codes.push_back(e.code());
    }
    return codes;
  }
  size_t BatchSize(const std::string& id) const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<size_t>(batches_.at(id).events_size());
  }

 private:
  mutable std::mutex mu_;
  int fail_next_ = 0;
  int lose_ack_next_ = 0;
  bool down_ = false;
  grpc::StatusCode fail_code_ = grpc::StatusCode::UNAVAILABLE;
  std::vector<std::string> calls_;
  std::map<std::string, v1::RecordClicksRequest> batches_;
  std::vector<std::string> order_;
};

// The fake on 127.0.0.1:<any port> and a stub connected to it.
class FakeClickServer {
 public:
  FakeClickServer() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&service);
    server_ = builder.BuildAndStart();
    channel_ =
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port_), grpc::InsecureChannelCredentials());
    stub = v1::ShortenService::NewStub(channel_);
  }
  ~FakeClickServer() { server_->Shutdown(std::chrono::system_clock::now()); }
  bool started() const { return server_ != nullptr; }

  FakeClickService service;
  std::unique_ptr<v1::ShortenService::Stub> stub;

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace shortener::edge

#endif  // SHORTENER_TESTS_EDGE_CLICKS_FAKE_CLICK_SERVICE_H_
