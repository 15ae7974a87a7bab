#include "edge/upstream/in_memory_link_resolver.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/codec/alias.h"

namespace shortener::edge {
namespace {

ResolveReply NoAnswer(absl::Status error) {
  ResolveReply reply;
  reply.outcome = ResolveOutcome::kUnavailable;
  reply.error = std::move(error);
  return reply;
}

}  // namespace

InMemoryLinkResolver::InMemoryLinkResolver(const shortener::Clock& clock)
    : clock_(clock), worker_([this] { Work(); }) {}

InMemoryLinkResolver::~InMemoryLinkResolver() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void InMemoryLinkResolver::Resolve(absl::string_view code, Clock::time_point deadline, Done done) {
  Call call;
  call.codes = {std::string(code)};
  call.deadline = deadline;
  call.one = std::move(done);
  Add(std::move(call));
}

void InMemoryLinkResolver::ResolveBatch(std::vector<std::string> codes, Clock::time_point deadline,
                                        BatchDone done) {
  Call call;
  call.codes = std::move(codes);
  call.deadline = deadline;
  call.batch = std::move(done);
  Add(std::move(call));
}

bool InMemoryLinkResolver::Ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  return available_;
}

void InMemoryLinkResolver::SetLink(const std::string& code, InMemoryLink link) {
  std::lock_guard<std::mutex> lock(mu_);
  links_[code] = std::move(link);
}

bool InMemoryLinkResolver::Revoke(const std::string& code) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = links_.find(code);
  if (it == links_.end()) return false;
  it->second.revoked = true;
  return true;
}

void InMemoryLinkResolver::SetMalformed(const std::string& code) {
  std::lock_guard<std::mutex> lock(mu_);
  malformed_.insert(code);
}

void InMemoryLinkResolver::SetAvailable(bool available) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    available_ = available;
  }
  changed_.notify_all();
}

void InMemoryLinkResolver::Hold() {
  std::lock_guard<std::mutex> lock(mu_);
  held_ = true;
}

void InMemoryLinkResolver::Release() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
  }
  changed_.notify_all();
}

std::vector<std::vector<std::string>> InMemoryLinkResolver::Calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

bool InMemoryLinkResolver::WaitForCalls(size_t n, absl::Duration timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                           [&] { return calls_.size() >= n; });
}

void InMemoryLinkResolver::Add(Call call) {
  call.start = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(call.codes);
    waiting_.push_back(std::move(call));
  }
  changed_.notify_all();
}

ResolveReply InMemoryLinkResolver::AnswerLocked(const std::string& code) const {
  ResolveReply reply;
  // The service's code syntax (its ParseCode): generated codes have alias
  // syntax too.
  if (!codec::HasAliasSyntax(code) || malformed_.count(code) != 0) {
    reply.outcome = ResolveOutcome::kInvalid;
    return reply;
  }
  auto it = links_.find(code);
  if (it == links_.end()) {
    reply.outcome = ResolveOutcome::kNotFound;
    return reply;
  }
  const InMemoryLink& link = it->second;
  reply.expire_time = link.expire_time;
  if (link.revoked) {
    reply.outcome = ResolveOutcome::kRevoked;
  } else if (link.expire_time.has_value() && *link.expire_time <= clock_.Now()) {
    reply.outcome = ResolveOutcome::kExpired;
  } else {
    reply.outcome = ResolveOutcome::kActive;
    reply.redirect_status = link.redirect_status;
    reply.location = link.location;
  }
  return reply;
}

void InMemoryLinkResolver::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Calls answered in this round, with their replies, answered after the
    // lock is released.
    std::vector<std::pair<Call, std::vector<ResolveReply>>> answered;
    const Clock::time_point now = Clock::now();
    Clock::time_point next = Clock::time_point::max();
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      std::vector<ResolveReply> replies;
      if (stopping_) {
        replies.assign(it->codes.size(), NoAnswer(absl::UnavailableError("upstream stopped")));
      } else if (now >= it->deadline) {
        replies.assign(
            it->codes.size(),
            NoAnswer(absl::DeadlineExceededError("Deadline Exceeded: no answer by the deadline")));
      } else if (!available_) {
        replies.assign(it->codes.size(), NoAnswer(absl::UnavailableError("upstream unavailable")));
      } else if (held_) {
        next = std::min(next, it->deadline);
        ++it;
        continue;
      } else {
        for (const std::string& code : it->codes) replies.push_back(AnswerLocked(code));
      }
      const absl::Duration latency = absl::FromChrono(now - it->start);
      for (ResolveReply& reply : replies) reply.latency = latency;
      answered.emplace_back(std::move(*it), std::move(replies));
      it = waiting_.erase(it);
    }
    if (!answered.empty()) {
      lock.unlock();
      for (auto& [call, replies] : answered) {
        if (call.one) {
          call.one(std::move(replies.front()));
        } else {
          call.batch(std::move(replies));
        }
      }
      answered.clear();  // callbacks' captures die outside the lock too
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

}  // namespace shortener::edge
