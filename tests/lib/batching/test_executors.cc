#include "tests/lib/batching/test_executors.h"

namespace shortener::batching::testing {

std::string Describe(Refusal::Reason reason) {
  switch (reason) {
    case Refusal::Reason::kQueueFull:
      return "queue full";
    case Refusal::Reason::kShuttingDown:
      return "shutting down";
    case Refusal::Reason::kExpired:
      return "expired";
  }
  return "?";
}

void Journal::BatchStarted(const std::vector<int>& batch) {
  std::lock_guard<std::mutex> lock(mu_);
  batches_.push_back(batch);
  changed_.notify_all();
}

void Journal::Answered(int item, std::string how) {
  std::lock_guard<std::mutex> lock(mu_);
  answers_[item].push_back(Answer{std::move(how), BatchClock::now()});
  ++total_answers_;
  changed_.notify_all();
}

void Journal::Refused(absl::Span<int> items, const Refusal& why) {
  if (why.reason == Refusal::Reason::kQueueFull) {
    std::lock_guard<std::mutex> lock(mu_);
    last_queue_full_ = why;
  }
  for (int item : items) Answered(item, Describe(why.reason));
}

bool Journal::WaitForBatches(size_t n) {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_for(lock, std::chrono::seconds(20), [&] { return batches_.size() >= n; });
}

bool Journal::WaitForAnswers(size_t n, absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                           [&] { return total_answers_ >= n; });
}

std::vector<std::vector<int>> Journal::batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batches_;
}

std::vector<size_t> Journal::batch_sizes() const {
  std::vector<size_t> sizes;
  for (const auto& batch : batches()) sizes.push_back(batch.size());
  return sizes;
}

size_t Journal::answers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_answers_;
}

std::vector<Journal::Answer> Journal::AnswersOf(int item) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = answers_.find(item);
  return it == answers_.end() ? std::vector<Answer>() : it->second;
}

std::string Journal::How(int item) const {
  const std::vector<Answer> answers = AnswersOf(item);
  if (answers.empty()) return "";
  return answers.size() == 1 ? answers.front().how : "twice";
}

Refusal Journal::last_queue_full() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_queue_full_;
}

void GatedRunner::Run(std::vector<int> batch) {
  journal_->BatchStarted(batch);
  (void)plan.OnCall("Run", batch.size());
  for (int item : batch) journal_->Answered(item, "executed");
}

void GatedRunner::Refuse(absl::Span<int> items, const Refusal& why) {
  journal_->Refused(items, why);
}

HeldSender::HeldSender(Journal* journal, bool completer_thread)
    : journal_(journal), completer_thread_(completer_thread) {
  if (completer_thread_) completer_ = std::thread([this] { CompleterLoop(); });
}

HeldSender::~HeldSender() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  if (completer_.joinable()) completer_.join();
}

void HeldSender::Start(std::vector<int> batch, BatchFinished finished) {
  journal_->BatchStarted(batch);
  Held held{std::move(batch), std::move(finished)};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!open_) {
      held_.push_back(std::move(held));
      return;
    }
    if (completer_thread_) {
      to_send_.push_back(std::move(held));
      work_.notify_one();
      return;
    }
  }
  Complete(std::move(held));
}

void HeldSender::Refuse(absl::Span<int> items, const Refusal& why) {
  journal_->Refused(items, why);
}

void HeldSender::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  open_ = false;
}

void HeldSender::Open() {
  std::deque<Held> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    held.swap(held_);
  }
  for (Held& h : held) Complete(std::move(h));
}

void HeldSender::ReleaseOne() {
  std::deque<Held> oldest;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (held_.empty()) return;
    oldest.push_back(std::move(held_.front()));
    held_.pop_front();
  }
  Complete(std::move(oldest.front()));
}

void HeldSender::Complete(Held held) {
  for (int item : held.batch) journal_->Answered(item, "executed");
  held.finished();
}

void HeldSender::CompleterLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [this] { return stopping_ || !to_send_.empty(); });
    if (to_send_.empty()) return;
    Held held = std::move(to_send_.front());
    to_send_.pop_front();
    lock.unlock();
    Complete(std::move(held));
    lock.lock();
  }
}

}  // namespace shortener::batching::testing
