// An in-memory ResolveTransport for the resolve batcher's tests, keeping
// gRPC (whose libraries TSan cannot see into) out of the concurrency tests.
// Codes in `links` resolve to their URL, others are kNotFound. Calls are
// answered on the transport's own thread, as gRPC's callbacks are; Hold()
// keeps them waiting until Release(), and a call still waiting at its
// deadline ends kUnavailable with DEADLINE_EXCEEDED, as a gRPC call does.
//
// Thread-safe; answers run on the transport's thread, never under its lock.
#ifndef SHORTENER_TESTS_EDGE_UPSTREAM_FAKE_RESOLVE_TRANSPORT_H_
#define SHORTENER_TESTS_EDGE_UPSTREAM_FAKE_RESOLVE_TRANSPORT_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "edge/upstream/resolve_transport.h"

namespace shortener::edge {

class FakeResolveTransport final : public ResolveTransport {
 public:
  FakeResolveTransport() : worker_([this] { Work(); }) {}
  // Answers every call still waiting, then joins.
  ~FakeResolveTransport() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      held_ = false;
    }
    changed_.notify_all();
    worker_.join();
  }

  void Resolve(absl::string_view code, Clock::time_point deadline,
               absl::AnyInvocable<void(ResolveReply)> done) override {
    Call call;
    call.codes = {std::string(code)};
    call.deadline = deadline;
    call.one = std::move(done);
    Add(std::move(call));
  }
  void ResolveBatch(std::vector<std::string> codes, Clock::time_point deadline,
                    absl::AnyInvocable<void(std::vector<ResolveReply>)> done) override {
    Call call;
    call.codes = std::move(codes);
    call.deadline = deadline;
    call.many = std::move(done);
    Add(std::move(call));
  }

  void AddLink(const std::string& code, const std::string& url) {
    std::lock_guard<std::mutex> lock(mu_);
    links_[code] = url;
  }
  void Hold() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = true;
  }
  void Release() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      held_ = false;
    }
    changed_.notify_all();
  }
  // The codes of every call made, in order.
  std::vector<std::vector<std::string>> Calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  // Waits until `n` calls were made (up to 10 s).
  bool WaitForCalls(size_t n) const {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(10), [&] { return calls_.size() >= n; });
  }

 private:
  struct Call {
    std::vector<std::string> codes;
    Clock::time_point deadline;
    absl::AnyInvocable<void(ResolveReply)> one;
    absl::AnyInvocable<void(std::vector<ResolveReply>)> many;
  };

  void Add(Call call) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      calls_.push_back(call.codes);
      waiting_.push_back(std::move(call));
    }
    changed_.notify_all();
  }

  void Work() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      std::vector<std::pair<Call, std::vector<ResolveReply>>> answered;
      const Clock::time_point now = Clock::now();
      Clock::time_point next = Clock::time_point::max();
      for (auto it = waiting_.begin(); it != waiting_.end();) {
        const bool expired = now >= it->deadline;
        if (!held_ || expired) {
          std::vector<ResolveReply> replies;
          for (const std::string& code : it->codes) {
            ResolveReply reply;
            if (!held_ && !expired) {
              auto link = links_.find(code);
              reply.outcome =
                  link == links_.end() ? ResolveOutcome::kNotFound : ResolveOutcome::kActive;
              if (link != links_.end()) reply.location = link->second;
            } else {
              reply.outcome = ResolveOutcome::kUnavailable;
              reply.error = absl::DeadlineExceededError("Deadline Exceeded");
            }
            replies.push_back(std::move(reply));
          }
          answered.emplace_back(std::move(*it), std::move(replies));
          it = waiting_.erase(it);
        } else {
          next = std::min(next, it->deadline);
          ++it;
        }
      }
      if (!answered.empty()) {
        lock.unlock();
        for (auto& [call, replies] : answered) {
          if (call.one) {
            call.one(std::move(replies.front()));
          } else {
            call.many(std::move(replies));
          }
        }
        lock.lock();
        continue;
      }
      if (stopping_) return;
      if (next == Clock::time_point::max()) {
        changed_.wait(lock);
      } else {
        changed_.wait_until(lock, next);
      }
    }
  }

  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  // Guarded by mu_:
  std::map<std::string, std::string> links_;
  std::vector<Call> waiting_;
  std::vector<std::vector<std::string>> calls_;
  bool held_ = false;
  bool stopping_ = false;
  std::thread worker_;  // last: starts after the rest is built
};

}  // namespace shortener::edge

#endif  // SHORTENER_TESTS_EDGE_UPSTREAM_FAKE_RESOLVE_TRANSPORT_H_
