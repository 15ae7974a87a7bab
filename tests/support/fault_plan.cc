#include "tests/support/fault_plan.h"

#include <algorithm>
#include <chrono>

#include "absl/time/clock.h"

namespace shortener::testing {

void FaultPlan::FailNext(int n, absl::Status status, absl::string_view method) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < n; ++i) failures_.push_back(Failure{std::string(method), status, nullptr});
}

void FaultPlan::ThrowNext(int n, std::exception_ptr exception, absl::string_view method) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < n; ++i) {
    failures_.push_back(Failure{std::string(method), absl::OkStatus(), exception});
  }
}

void FaultPlan::ClearFaults() {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.clear();
}

void FaultPlan::SetLatency(absl::Duration latency) {
  std::lock_guard<std::mutex> lock(mu_);
  latency_ = latency;
}

void FaultPlan::CloseGate() {
  std::lock_guard<std::mutex> lock(mu_);
  gate_open_ = false;
}

void FaultPlan::OpenGate() {
  std::lock_guard<std::mutex> lock(mu_);
  gate_open_ = true;
  passes_for_next_ = 0;
  changed_.notify_all();
}

void FaultPlan::PassOne() {
  std::lock_guard<std::mutex> lock(mu_);
  if (waiting_.empty()) {
    ++passes_for_next_;
    return;
  }
  passing_.insert(waiting_.front());
  waiting_.pop_front();
  changed_.notify_all();
}

int64_t FaultPlan::calls(absl::string_view method) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (method.empty()) return total_calls_;
  auto it = batches_.find(method);
  return it == batches_.end() ? 0 : static_cast<int64_t>(it->second.size());
}

std::vector<size_t> FaultPlan::batch_sizes(absl::string_view method) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = batches_.find(method);
  return it == batches_.end() ? std::vector<size_t>() : it->second;
}

int64_t FaultPlan::items(absl::string_view method) const {
  int64_t sum = 0;
  for (size_t n : batch_sizes(method)) sum += static_cast<int64_t>(n);
  return sum;
}

std::vector<std::thread::id> FaultPlan::threads(absl::string_view method) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = threads_.find(method);
  return it == threads_.end() ? std::vector<std::thread::id>() : it->second;
}

bool FaultPlan::WaitForCalls(int64_t n, absl::string_view method, absl::Duration timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] {
    if (method.empty()) return total_calls_ >= n;
    auto it = batches_.find(method);
    return it != batches_.end() && static_cast<int64_t>(it->second.size()) >= n;
  });
}

void FaultPlan::WaitAtGate(std::unique_lock<std::mutex>& lock, int64_t call) {
  if (gate_open_) return;
  if (passes_for_next_ > 0) {
    --passes_for_next_;
    return;
  }
  waiting_.push_back(call);
  changed_.wait(lock, [&] { return gate_open_ || passing_.count(call) != 0; });
  if (passing_.erase(call) == 0) waiting_.erase(std::find(waiting_.begin(), waiting_.end(), call));
}

absl::Status FaultPlan::OnCall(absl::string_view method, size_t items) {
  absl::Duration latency;
  absl::Status injected;
  std::exception_ptr exception;
  {
    std::unique_lock<std::mutex> lock(mu_);
    ++total_calls_;
    batches_[std::string(method)].push_back(items);
    threads_[std::string(method)].push_back(std::this_thread::get_id());
    changed_.notify_all();
    WaitAtGate(lock, total_calls_);
    latency = latency_;
    for (auto it = failures_.begin(); it != failures_.end(); ++it) {
      if (it->method.empty() || it->method == method) {
        injected = it->status;
        exception = it->exception;
        failures_.erase(it);
        break;
      }
    }
  }
  if (latency > absl::ZeroDuration()) absl::SleepFor(latency);
  if (exception != nullptr) std::rethrow_exception(exception);
  return injected;
}

}  // namespace shortener::testing
