// An in-process ShortenService that implements Resolve and BatchResolve
// only, for the resolve batcher's tests: codes in `links` resolve to their
// URL, others are NOT_FOUND; every call's codes are recorded; Hold() makes
// calls wait (on their gRPC server thread) until Release(), so a test can
// keep calls "in flight" as long as it needs.
//
// Thread safety: the handlers run on gRPC threads; everything else is called
// by the test thread; all under one mutex.
#ifndef SHORTENER_TESTS_EDGE_UPSTREAM_FAKE_RESOLVE_SERVICE_H_
#define SHORTENER_TESTS_EDGE_UPSTREAM_FAKE_RESOLVE_SERVICE_H_

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/support/in_process_server.h"

namespace shortener::edge {

class FakeResolveService final : public v1::ShortenService::Service {
 public:
  grpc::Status Resolve(grpc::ServerContext* ctx, const v1::ResolveRequest* request,
                       v1::ResolveResponse* response) override {
    std::vector<std::string> codes = {request->code()};
    WaitWhileHeld(ctx, codes);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = links_.find(request->code());
    if (it == links_.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no such code");
    response->set_long_url(it->second);
    response->set_state(v1::LINK_STATE_ACTIVE);
    return grpc::Status::OK;
  }

  grpc::Status BatchResolve(grpc::ServerContext* ctx, const v1::BatchResolveRequest* request,
                            v1::BatchResolveResponse* response) override {
    std::vector<std::string> codes(request->codes().begin(), request->codes().end());
    WaitWhileHeld(ctx, codes);
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& code : codes) {
      v1::BatchResolveResult* r = response->add_results();
      auto it = links_.find(code);
      if (it == links_.end()) {
        r->mutable_error()->set_code(static_cast<int>(grpc::StatusCode::NOT_FOUND));
        r->mutable_error()->set_message("no such code");
      } else {
        r->mutable_response()->set_long_url(it->second);
        r->mutable_response()->set_state(v1::LINK_STATE_ACTIVE);
      }
    }
    return grpc::Status::OK;
  }

  void AddLink(const std::string& code, const std::string& url) {
    std::lock_guard<std::mutex> lock(mu_);
    links_[code] = url;
  }
  // Calls wait until Release() (or their client gives up).
  void Hold() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = true;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
    released_.notify_all();
  }
  // The codes of every call received, in arrival order.
  std::vector<std::vector<std::string>> Calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  // Waits until `n` calls have arrived.
  bool WaitForCalls(size_t n, absl::Duration timeout = absl::Seconds(10)) const {
    std::unique_lock<std::mutex> lock(mu_);
    return arrived_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                             [&] { return calls_.size() >= n; });
  }

 private:
  void WaitWhileHeld(grpc::ServerContext* ctx, const std::vector<std::string>& codes) {
    std::unique_lock<std::mutex> lock(mu_);
    calls_.push_back(codes);
    arrived_.notify_all();
    // Wakes now and then to notice a client that gave up.
    while (held_ && !ctx->IsCancelled()) released_.wait_for(lock, std::chrono::milliseconds(20));
  }

  mutable std::mutex mu_;
  mutable std::condition_variable arrived_;
  std::condition_variable released_;
  std::map<std::string, std::string> links_;
  bool held_ = false;
  std::vector<std::vector<std::string>> calls_;
};

// The fake on 127.0.0.1:<any port> and a channel to it.
using FakeResolveServer = testing::InProcessServer<FakeResolveService>;

}  // namespace shortener::edge

#endif  // SHORTENER_TESTS_EDGE_UPSTREAM_FAKE_RESOLVE_SERVICE_H_
