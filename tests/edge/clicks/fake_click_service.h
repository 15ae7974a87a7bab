// An in-process ShortenService that implements RecordClicks only, for the
// click sender's tests: it deduplicates batches by id as the real service
// does, records every call's batch id and size, fails calls on demand, and
// refuses events (one by one, as the service does, or by refusing the whole
// batch, as an older or stricter service might) by a rule the test sets.
//
// Thread safety: RecordClicks runs on gRPC threads; everything else is
// called by the test thread; all under one mutex.
#ifndef SHORTENER_TESTS_EDGE_CLICKS_FAKE_CLICK_SERVICE_H_
#define SHORTENER_TESTS_EDGE_CLICKS_FAKE_CLICK_SERVICE_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "shortener/v1/shortener.grpc.pb.h"
#include "tests/support/in_process_server.h"

namespace shortener::edge {

class FakeClickService final : public v1::ShortenService::Service {
 public:
  grpc::Status RecordClicks(grpc::ServerContext*, const v1::RecordClicksRequest* request,
                            v1::RecordClicksResponse* response) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(request->batch_id());
    request_bytes_.push_back(request->ByteSizeLong());
    if (fail_next_ > 0) {
      --fail_next_;
      return grpc::Status(fail_code_, "injected failure");
    }
    if (down_) return grpc::Status(fail_code_, "injected outage");
    if (auto it = fail_batch_.find(request->batch_id());
        it != fail_batch_.end() && it->second > 0) {
      --it->second;
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "injected failure of this batch");
    }
    if (request->batch_id().empty() || request->batch_id().size() > 128) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "batch_id: must be 1 to 128 bytes");
    }
    if (request->events_size() > max_events_) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("events: must be 1 to ", max_events_));
    }
    for (const v1::ClickEvent& e : request->events()) {
      if (refuse_batch_ && refuse_batch_(e)) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                            "injected: whole batch refused for code " + e.code());
      }
    }
    v1::RecordClicksRequest kept;
    kept.set_batch_id(request->batch_id());
    for (int i = 0; i < request->events_size(); ++i) {
      if (refuse_event_ && refuse_event_(request->events(i))) {
        v1::RefusedClickEvent* refused = response->add_refused();
        refused->set_index(i);
        refused->set_reason(absl::StrCat("code: injected refusal ", i));
      } else {
        *kept.add_events() = request->events(i);
      }
    }
    if (batches_.count(request->batch_id()) == 0) {
      response->set_accepted(kept.events_size());
      batches_[request->batch_id()] = std::move(kept);
      order_.push_back(request->batch_id());
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
  // The next `n` calls for batch `id` fail with UNAVAILABLE.
  void FailBatch(const std::string& id, int n) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_batch_[id] = n;
  }
  // Every call fails with `code` while down.
  void SetDown(bool down, grpc::StatusCode code = grpc::StatusCode::UNAVAILABLE) {
    std::lock_guard<std::mutex> lock(mu_);
    down_ = down;
    fail_code_ = code;
  }
  // Events for which `refuse` holds are listed as refused in the answer
  // and not recorded (what the service does with malformed events).
  void RefuseEvents(std::function<bool(const v1::ClickEvent&)> refuse) {
    std::lock_guard<std::mutex> lock(mu_);
    refuse_event_ = std::move(refuse);
  }
  // A batch holding an event for which `refuse` holds is refused as a whole
  // with INVALID_ARGUMENT, nothing recorded.
  void RefuseBatchesWith(std::function<bool(const v1::ClickEvent&)> refuse) {
    std::lock_guard<std::mutex> lock(mu_);
    refuse_batch_ = std::move(refuse);
  }
  // Batches of more events are refused as a whole with INVALID_ARGUMENT.
  void SetMaxEvents(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    max_events_ = n;
  }
  // The encoded size of every call's request, in arrival order.
  std::vector<size_t> RequestBytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return request_bytes_;
  }
  // Every recorded event, in batch order.
  std::vector<v1::ClickEvent> RecordedEvents() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<v1::ClickEvent> events;
    for (const std::string& id : order_) {
      for (const v1::ClickEvent& e : batches_.at(id).events()) events.push_back(e);
    }
    return events;
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
  int max_events_ = 10000;
  std::map<std::string, int> fail_batch_;
  std::function<bool(const v1::ClickEvent&)> refuse_event_;
  std::function<bool(const v1::ClickEvent&)> refuse_batch_;
  std::vector<std::string> calls_;
  std::vector<size_t> request_bytes_;
  std::map<std::string, v1::RecordClicksRequest> batches_;
  std::vector<std::string> order_;
};

// The fake on 127.0.0.1:<any port> and a channel to it.
using FakeClickServer = testing::InProcessServer<FakeClickService>;

}  // namespace shortener::edge

#endif  // SHORTENER_TESTS_EDGE_CLICKS_FAKE_CLICK_SERVICE_H_
