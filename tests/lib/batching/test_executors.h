// Executors for the AdaptiveBatcher tests, over items that are plain ints:
// a blocking one (GatedRunner) and an asynchronous one (HeldSender), both
// writing what happened to a Journal, and rigs that put each in front of a
// batcher, so that one test runs against both kinds.
#ifndef SHORTENER_TESTS_LIB_BATCHING_TEST_EXECUTORS_H_
#define SHORTENER_TESTS_LIB_BATCHING_TEST_EXECUTORS_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "lib/batching/adaptive_batcher.h"
#include "tests/support/fault_plan.h"

namespace shortener::batching::testing {

// How an item was answered: "executed", or its refusal: "queue full",
// "shutting down", "expired".
std::string Describe(Refusal::Reason reason);

// The batches executors started and the answers items got. Thread-safe;
// the Wait* methods give up after 20 s.
class Journal {
 public:
  struct Answer {
    std::string how;
    BatchClock::time_point when;
  };

  void BatchStarted(const std::vector<int>& batch);
  void Answered(int item, std::string how);
  void Refused(absl::Span<int> items, const Refusal& why);

  bool WaitForBatches(size_t n);
  bool WaitForAnswers(size_t n, absl::Duration timeout = absl::Seconds(20));
  std::vector<std::vector<int>> batches() const;
  std::vector<size_t> batch_sizes() const;
  size_t answers() const;
  // The answers of `item` (a correct batcher gives exactly one).
  std::vector<Answer> AnswersOf(int item) const;
  // How `item` was answered, or "" when it was not, or "twice" when more.
  std::string How(int item) const;
  // The last refusal of kQueueFull seen.
  Refusal last_queue_full() const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::vector<std::vector<int>> batches_;
  std::map<int, std::vector<Answer>> answers_;
  size_t total_answers_ = 0;
  Refusal last_queue_full_{Refusal::Reason::kQueueFull};
};

// Blocking: Run records the batch, passes `plan` (its gate; the plan
// records the thread of every "Run"), answers "executed".
class GatedRunner final : public BlockingBatchExecutor<int> {
 public:
  explicit GatedRunner(Journal* journal) : journal_(journal) {}
  void Run(std::vector<int> batch) override;
  void Refuse(absl::Span<int> items, const Refusal& why) override;

  shortener::testing::FaultPlan plan;

 private:
  Journal* const journal_;
};

// Asynchronous: Start records the batch. While the gate is open, a batch is
// answered at once, within Start (or on the completer thread, with
// `completer_thread`); while it is closed, batches wait until Open.
class HeldSender final : public AsyncBatchExecutor<int> {
 public:
  HeldSender(Journal* journal, bool completer_thread);
  ~HeldSender() override;
  void Start(std::vector<int> batch, BatchFinished finished) override;
  void Refuse(absl::Span<int> items, const Refusal& why) override;

  void Close();
  // Answers the held batches (on this thread), and later ones at once.
  void Open();
  // Answers the oldest held batch (on this thread); the gate stays closed.
  void ReleaseOne();

 private:
  struct Held {
    std::vector<int> batch;
    BatchFinished finished;
  };
  void Complete(Held held);
  void CompleterLoop();

  Journal* const journal_;
  std::mutex mu_;
  std::condition_variable work_;
  bool open_ = true;
  bool stopping_ = false;
  const bool completer_thread_;
  std::deque<Held> held_;     // gate closed
  std::deque<Held> to_send_;  // for the completer thread
  std::thread completer_;
};

// A batcher in front of a blocking executor; Hold/Release close and open
// its gate. Released at destruction (the batcher then drains).
struct BlockingRig {
  static constexpr const char* kName = "blocking";
  explicit BlockingRig(AdaptiveBatcherOptions options, bool = false)
      : runner(&journal), batcher(options, &runner) {}
  ~BlockingRig() { Release(); }
  void Hold() { runner.plan.CloseGate(); }
  void Release() { runner.plan.OpenGate(); }
  // Lets one held batch finish (any one).
  void ReleaseOne() { runner.plan.PassOne(); }

  Journal journal;
  GatedRunner runner;
  AdaptiveBatcher<int> batcher;
};

// The same with an asynchronous executor (answering within Start, or on a
// thread of its own with `completer_thread`).
struct AsyncRig {
  static constexpr const char* kName = "async";
  explicit AsyncRig(AdaptiveBatcherOptions options, bool completer_thread = false)
      : sender(&journal, completer_thread), batcher(options, &sender) {}
  ~AsyncRig() { Release(); }
  void Hold() { sender.Close(); }
  void Release() { sender.Open(); }
  // Lets the oldest held batch finish.
  void ReleaseOne() { sender.ReleaseOne(); }

  Journal journal;
  HeldSender sender;
  AdaptiveBatcher<int> batcher;
};

}  // namespace shortener::batching::testing

#endif  // SHORTENER_TESTS_LIB_BATCHING_TEST_EXECUTORS_H_
