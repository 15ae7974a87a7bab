#include "edge/clicks/click_sender.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/edge/clicks/fake_click_service.h"

namespace shortener::edge {
namespace {

ClickEvent Event(const std::string& code) {
  return MakeClickEvent(code, absl::Now(), "10.0.0.1", "Mozilla/5.0", "", 302);
}

// Polls `done` for up to `timeout`; true once it holds.
bool WaitUntil(const std::function<bool()>& done,
               std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

ClickSenderOptions FastOptions() {
  ClickSenderOptions options;
  options.batch_size = 1000;
  options.flush_interval = absl::Milliseconds(50);
  options.rpc_timeout = absl::Seconds(2);
  options.initial_backoff = absl::Milliseconds(10);
  options.max_backoff = absl::Milliseconds(100);
  options.instance_id = "test";
  options.seed = 42;
  return options;
}

std::vector<std::string> Codes(const std::string& prefix, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(absl::StrCat(prefix, i));
  return out;
}

TEST_CASE("the sender ships full batches at once and the rest when stopped",
          "[edge/clicks][sender]") {
  FakeClickServer server;
  REQUIRE(server.started());
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 20);
  GrpcClickTransport transport(server.channel);
  ClickSenderOptions options = FastOptions();
  options.batch_size = 10;
  options.flush_interval = absl::Hours(1);  // only size triggers a batch
  ClickSender sender(&queue, &spool, &transport, options);
  sender.Start();
  for (const std::string& code : Codes("c", 25)) REQUIRE(queue.Push(Event(code)));
  CHECK(WaitUntil([&] { return server.service.Recorded().size() == 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(server.service.Recorded().size() == 2);  // 5 events wait for a full batch or Stop
  sender.Stop(absl::Seconds(5));
  const std::vector<std::string> ids = server.service.Recorded();
  REQUIRE(ids.size() == 3);
  CHECK(ids == std::vector<std::string>{"test-1", "test-2", "test-3"});
  CHECK(server.service.BatchSize(ids[0]) == 10);
  CHECK(server.service.BatchSize(ids[2]) == 5);
  CHECK(server.service.RecordedCodes() == Codes("c", 25));
  const ClickSenderStats stats = sender.Stats();
  CHECK(stats.batches_acked == 3);
  CHECK(stats.events_acked == 25);
  CHECK(stats.rpc_failures == 0);
  CHECK(stats.batches_spooled == 0);
}

TEST_CASE("the sender ships a partial batch after the flush interval", "[edge/clicks][sender]") {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 20);
  GrpcClickTransport transport(server.channel);
  ClickSender sender(&queue, &spool, &transport, FastOptions());
  sender.Start();
  for (const std::string& code : Codes("t", 3)) REQUIRE(queue.Push(Event(code)));
  CHECK(WaitUntil([&] { return server.service.Recorded().size() == 1; }, std::chrono::seconds(2)));
  CHECK(server.service.RecordedCodes() == Codes("t", 3));
  sender.Stop(absl::Seconds(1));
}

TEST_CASE("a batch that failed with UNAVAILABLE is retried with the same id",
          "[edge/clicks][sender]") {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 20);
  GrpcClickTransport transport(server.channel);
  ClickSender sender(&queue, &spool, &transport, FastOptions());
  server.service.FailNext(2);
  sender.Start();
  for (const std::string& code : Codes("r", 4)) REQUIRE(queue.Push(Event(code)));
  CHECK(WaitUntil([&] { return server.service.Recorded().size() == 1; }));
  sender.Stop(absl::Seconds(1));
  CHECK(server.service.Calls() == std::vector<std::string>{"test-1", "test-1", "test-1"});
  CHECK(server.service.RecordedCodes() == Codes("r", 4));
  const ClickSenderStats stats = sender.Stats();
  CHECK(stats.rpc_failures == 2);
  CHECK(stats.batches_spooled == 1);
  CHECK(stats.batches_replayed == 1);
}

TEST_CASE("a batch whose answer was lost is sent again and counted once", "[edge/clicks][sender]") {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 20);
  GrpcClickTransport transport(server.channel);
  ClickSender sender(&queue, &spool, &transport, FastOptions());
  server.service.LoseAckNext(1);
  sender.Start();
  for (const std::string& code : Codes("l", 3)) REQUIRE(queue.Push(Event(code)));
  CHECK(WaitUntil([&] { return sender.Stats().batches_replayed == 1; }));
  sender.Stop(absl::Seconds(1));
  CHECK(server.service.Calls() == std::vector<std::string>{"test-1", "test-1"});
  CHECK(server.service.RecordedCodes() == Codes("l", 3));
}

void OutageAndRecovery(ClickSpool& spool, grpc::StatusCode outage_code) {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  GrpcClickTransport transport(server.channel);
  ClickSenderOptions options = FastOptions();
  options.batch_size = 5;
  ClickSender sender(&queue, &spool, &transport, options);
  server.service.SetDown(true, outage_code);
  sender.Start();
  const std::vector<std::string> codes = Codes("o", 60);
  for (size_t i = 0; i < codes.size(); ++i) {
    REQUIRE(queue.Push(Event(codes[i])));
    if (i % 7 == 6) std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  CHECK(WaitUntil([&] { return sender.Stats().events_spooled == codes.size(); }));
  CHECK(server.service.Recorded().empty());
  CHECK(spool.Stats().batches == sender.Stats().batches_spooled);
  server.service.SetDown(false);
  CHECK(WaitUntil([&] { return spool.empty(); }));
  sender.Stop(absl::Seconds(1));

  // Every event exactly once, in the order the edge saw them.
  CHECK(server.service.RecordedCodes() == codes);
  const std::vector<std::string> recorded = server.service.Recorded();
  CHECK(std::set<std::string>(recorded.begin(), recorded.end()).size() == recorded.size());
  // Batches were retried (same ids) while the service failed.
  CHECK(server.service.Calls().size() > recorded.size());
  const ClickSenderStats stats = sender.Stats();
  CHECK(stats.batches_replayed == recorded.size());
  CHECK(stats.dropped_spool_full == 0);
}

TEST_CASE("while the service is down batches are spooled and replayed in order once it is back",
          "[edge/clicks][sender]") {
  SECTION("in-memory spool") {
    InMemoryClickSpool spool(1 << 20);
    OutageAndRecovery(spool, grpc::StatusCode::UNAVAILABLE);
  }
  SECTION("file spool") {
    char templ[] = "/tmp/click_sender_test.XXXXXX";
    REQUIRE(mkdtemp(templ) != nullptr);
    {
      FileClickSpoolOptions spool_options;
      spool_options.dir = templ;
      spool_options.segment_bytes = 512;  // several segments, deleted as acknowledged
      absl::StatusOr<std::unique_ptr<ClickSpool>> spool = OpenFileClickSpool(spool_options);
      REQUIRE(spool.ok());
      OutageAndRecovery(**spool, grpc::StatusCode::UNAVAILABLE);
    }
    CHECK(std::filesystem::is_empty(templ));
    std::filesystem::remove_all(templ);
  }
}

TEST_CASE("batches refused with PERMISSION_DENIED are kept and delivered once it is fixed",
          "[edge/clicks][sender]") {
  InMemoryClickSpool spool(1 << 20);
  OutageAndRecovery(spool, grpc::StatusCode::PERMISSION_DENIED);
}

TEST_CASE("events beyond the spool cap are dropped and counted", "[edge/clicks][sender]") {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1);  // nothing fits
  GrpcClickTransport transport(server.channel);
  ClickSender sender(&queue, &spool, &transport, FastOptions());
  server.service.SetDown(true);
  sender.Start();
  for (const std::string& code : Codes("d", 4)) REQUIRE(queue.Push(Event(code)));
  CHECK(WaitUntil([&] { return sender.Stats().dropped_spool_full == 4; }));
  sender.Stop(absl::ZeroDuration());
  CHECK(server.service.Recorded().empty());
}

TEST_CASE("stopping sends what is queued at once", "[edge/clicks][sender]") {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 20);
  GrpcClickTransport transport(server.channel);
  ClickSenderOptions options = FastOptions();
  options.flush_interval = absl::Hours(1);
  ClickSender sender(&queue, &spool, &transport, options);
  sender.Start();
  for (const std::string& code : Codes("s", 7)) REQUIRE(queue.Push(Event(code)));
  const auto start = std::chrono::steady_clock::now();
  sender.Stop(absl::Seconds(5));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
  CHECK(server.service.RecordedCodes() == Codes("s", 7));
  CHECK_FALSE(queue.Push(Event("late")));  // closed
}

TEST_CASE("stopping while the service is down spools the queue for the next run",
          "[edge/clicks][sender]") {
  char templ[] = "/tmp/click_sender_test.XXXXXX";
  REQUIRE(mkdtemp(templ) != nullptr);
  FileClickSpoolOptions spool_options;
  spool_options.dir = templ;
  FakeClickServer server;
  GrpcClickTransport transport(server.channel);
  ClickSenderOptions options = FastOptions();
  options.flush_interval = absl::Hours(1);
  {
    absl::StatusOr<std::unique_ptr<ClickSpool>> spool = OpenFileClickSpool(spool_options);
    REQUIRE(spool.ok());
    ClickQueue queue(ClickQueueOptions{});
    ClickSender sender(&queue, spool->get(), &transport, options);
    server.service.SetDown(true);
    sender.Start();
    for (const std::string& code : Codes("k", 6)) REQUIRE(queue.Push(Event(code)));
    const auto start = std::chrono::steady_clock::now();
    sender.Stop(absl::Milliseconds(300));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
    CHECK((*spool)->Stats().batches == 1);
  }
  // The next run (a new instance id) replays the spooled batch under its
  // original id.
  server.service.SetDown(false);
  absl::StatusOr<std::unique_ptr<ClickSpool>> spool = OpenFileClickSpool(spool_options);
  REQUIRE(spool.ok());
  ClickQueue queue(ClickQueueOptions{});
  options.instance_id = "next";
  ClickSender sender(&queue, spool->get(), &transport, options);
  sender.Start();
  CHECK(WaitUntil([&] { return (*spool)->empty(); }));
  sender.Stop(absl::Seconds(1));
  CHECK(server.service.Recorded() == std::vector<std::string>{"test-1"});
  CHECK(server.service.RecordedCodes() == Codes("k", 6));
  std::filesystem::remove_all(templ);
}

TEST_CASE("stopping does not wait out the flush timeout for a service that refuses batches",
          "[edge/clicks][sender]") {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 20);
  GrpcClickTransport transport(server.channel);
  ClickSenderOptions options = FastOptions();
  options.flush_interval = absl::Hours(1);
  ClickSender sender(&queue, &spool, &transport, options);
  server.service.SetDown(true, grpc::StatusCode::UNIMPLEMENTED);
  sender.Start();
  for (const std::string& code : Codes("u", 3)) REQUIRE(queue.Push(Event(code)));
  const auto start = std::chrono::steady_clock::now();
  sender.Stop(absl::Seconds(30));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(server.service.Calls().size() == 1);
  CHECK(spool.Stats().batches == 1);  // kept, not dropped
  CHECK(sender.Stats().dropped_spool_full == 0);
}

TEST_CASE("a transient failure at shutdown is retried within the flush timeout",
          "[edge/clicks][sender]") {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 20);
  GrpcClickTransport transport(server.channel);
  ClickSenderOptions options = FastOptions();
  options.flush_interval = absl::Hours(1);
  ClickSender sender(&queue, &spool, &transport, options);
  server.service.FailNext(3);
  sender.Start();
  for (const std::string& code : Codes("v", 3)) REQUIRE(queue.Push(Event(code)));
  sender.Stop(absl::Seconds(5));
  CHECK(server.service.Calls() == std::vector<std::string>{"test-1", "test-1", "test-1", "test-1"});
  CHECK(server.service.RecordedCodes() == Codes("v", 3));
  CHECK(spool.empty());
}

// Codes of the recorded events that are not in `refused`, in order.
std::vector<std::string> Without(const std::vector<std::string>& codes,
                                 const std::set<std::string>& refused) {
  std::vector<std::string> out;
  for (const std::string& c : codes) {
    if (refused.count(c) == 0) out.push_back(c);
  }
  return out;
}

TEST_CASE("events the service refuses are dropped and counted and the rest recorded",
          "[edge/clicks][sender]") {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 20);
  GrpcClickTransport transport(server.channel);
  ClickSender sender(&queue, &spool, &transport, FastOptions());
  server.service.RefuseEvents(
      [](const v1::ClickEvent& e) { return e.code() == "x3" || e.code() == "x7"; });
  sender.Start();
  const std::vector<std::string> codes = Codes("x", 10);
  for (const std::string& code : codes) REQUIRE(queue.Push(Event(code)));
  CHECK(WaitUntil([&] { return sender.Stats().dropped_refused == 2; }));
  for (const std::string& code : Codes("y", 3)) REQUIRE(queue.Push(Event(code)));
  CHECK(WaitUntil([&] { return server.service.Recorded().size() == 2; }));
  sender.Stop(absl::Seconds(1));
  std::vector<std::string> expected = Without(codes, {"x3", "x7"});
  for (const std::string& code : Codes("y", 3)) expected.push_back(code);
  CHECK(server.service.RecordedCodes() == expected);
  // Nothing retried, nothing spooled.
  CHECK(server.service.Calls() == std::vector<std::string>{"test-1", "test-2"});
  const ClickSenderStats stats = sender.Stats();
  CHECK(stats.dropped_refused == 2);
  CHECK(stats.events_acked == 11);
  CHECK(stats.batches_spooled == 0);
  CHECK(spool.empty());
}

// Captures what is written to stderr (the log) while it lives.
class StderrCapture {
 public:
  StderrCapture() {
    char templ[] = "/tmp/click_sender_log.XXXXXX";
    const int fd = mkstemp(templ);
    REQUIRE(fd >= 0);
    path_ = templ;
    saved_ = dup(2);
    dup2(fd, 2);
    close(fd);
  }
  ~StderrCapture() {
    Restore();
    std::filesystem::remove(path_);
  }
  // Stops capturing and returns what was written.
  std::string Restore() {
    if (saved_ >= 0) {
      dup2(saved_, 2);
      close(saved_);
      saved_ = -1;
    }
    std::ifstream in(path_);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

 private:
  std::string path_;
  int saved_ = -1;
};

int CountLines(const std::string& log, const std::string& needle) {
  int n = 0;
  for (size_t at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) ++n;
  return n;
}

TEST_CASE("refusals are logged once per cause, not once per event", "[edge/clicks][sender]") {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 20);
  GrpcClickTransport transport(server.channel);
  ClickSenderOptions options = FastOptions();
  options.batch_size = 50;
  ClickSender sender(&queue, &spool, &transport, options);
  // 100 refused events whose reasons ("code: injected refusal <index>")
  // differ only in digits: one cause; and four batches over the service's
  // event limit, refused whole: another.
  server.service.RefuseEvents([](const v1::ClickEvent& e) { return e.code()[0] == 'r'; });
  server.service.SetMaxEvents(25);
  StderrCapture capture;
  sender.Start();
  for (int i = 0; i < 200; ++i) REQUIRE(queue.Push(Event(absl::StrCat(i % 2 == 0 ? "r" : "k", i))));
  CHECK(WaitUntil([&] { return sender.Stats().dropped_refused == 100; }));
  sender.Stop(absl::Seconds(1));
  const std::string log = capture.Restore();
  INFO(log);
  CHECK(CountLines(log, "click events REFUSED") == 1);
  CHECK(CountLines(log, "refused 1 batches as a whole") == 1);
  for (const std::string& code : server.service.RecordedCodes()) CHECK(code[0] == 'k');
  CHECK(server.service.RecordedCodes().size() == 100);
}

void SplitUntilRefusedIsolated(ClickSpool& spool) {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  GrpcClickTransport transport(server.channel);
  ClickSenderOptions options = FastOptions();
  options.batch_size = 100;
  options.flush_interval = absl::Milliseconds(20);
  ClickSender sender(&queue, &spool, &transport, options);
  // An older service: one bad event refuses its whole batch.
  const std::set<std::string> bad = {"z5", "z6", "z60", "z99"};
  server.service.RefuseBatchesWith(
      [&bad](const v1::ClickEvent& e) { return bad.count(e.code()) > 0; });
  sender.Start();
  const std::vector<std::string> codes = Codes("z", 100);
  for (const std::string& code : codes) REQUIRE(queue.Push(Event(code)));
  CHECK(WaitUntil([&] { return sender.Stats().dropped_refused == bad.size(); }));
  // The batches behind it are not held up.
  for (const std::string& code : Codes("w", 5)) REQUIRE(queue.Push(Event(code)));
  CHECK(WaitUntil([&] { return server.service.RecordedCodes().size() == 96 + 5; }));
  sender.Stop(absl::Seconds(1));
  std::vector<std::string> expected = Without(codes, bad);
  for (const std::string& code : Codes("w", 5)) expected.push_back(code);
  CHECK(server.service.RecordedCodes() == expected);
  // Each half has an id of its own, within the service's limit.
  const std::vector<std::string> ids = server.service.Recorded();
  CHECK(std::set<std::string>(ids.begin(), ids.end()).size() == ids.size());
  for (const std::string& id : ids) {
    CHECK(id.size() <= kMaxBatchIdBytes);
    if (id != "test-2") CHECK_THAT(id, Catch::StartsWith("test-1."));
  }
  const ClickSenderStats stats = sender.Stats();
  CHECK(stats.dropped_refused == bad.size());
  CHECK(stats.batches_split > 0);
  CHECK(stats.events_acked == 96 + 5);
  CHECK(spool.empty());
}

TEST_CASE("a batch refused as a whole is split until only the refused events are dropped",
          "[edge/clicks][sender]") {
  SECTION("in-memory spool") {
    InMemoryClickSpool spool(1 << 20);
    SplitUntilRefusedIsolated(spool);
  }
  SECTION("file spool") {
    char templ[] = "/tmp/click_sender_test.XXXXXX";
    REQUIRE(mkdtemp(templ) != nullptr);
    {
      FileClickSpoolOptions spool_options;
      spool_options.dir = templ;
      absl::StatusOr<std::unique_ptr<ClickSpool>> spool = OpenFileClickSpool(spool_options);
      REQUIRE(spool.ok());
      SplitUntilRefusedIsolated(**spool);
    }
    std::filesystem::remove_all(templ);
  }
}

TEST_CASE("a batch over the service's event limit is split and recorded whole",
          "[edge/clicks][sender]") {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 20);
  GrpcClickTransport transport(server.channel);
  ClickSenderOptions options = FastOptions();
  options.batch_size = 10;
  ClickSender sender(&queue, &spool, &transport, options);
  server.service.SetMaxEvents(3);
  sender.Start();
  const std::vector<std::string> codes = Codes("m", 10);
  for (const std::string& code : codes) REQUIRE(queue.Push(Event(code)));
  CHECK(WaitUntil([&] { return server.service.RecordedCodes().size() == 10; }));
  sender.Stop(absl::Seconds(1));
  CHECK(server.service.RecordedCodes() == codes);
  CHECK(sender.Stats().dropped_refused == 0);
  // 10 -> 5 + 5 -> (2 + 3) + (2 + 3).
  CHECK(server.service.Recorded() ==
        std::vector<std::string>{"test-1.0.0", "test-1.0.1", "test-1.1.0", "test-1.1.1"});
}

TEST_CASE("a half that fails while the service is down waits in the spool under its own id",
          "[edge/clicks][sender]") {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 20);
  GrpcClickTransport transport(server.channel);
  ClickSenderOptions options = FastOptions();
  options.batch_size = 4;
  ClickSender sender(&queue, &spool, &transport, options);
  // The whole batch is refused (4 > 2); the call for its first half fails.
  server.service.SetMaxEvents(2);
  server.service.FailBatch("test-1.0", 1);
  sender.Start();
  const std::vector<std::string> codes = Codes("h", 4);
  for (const std::string& code : codes) REQUIRE(queue.Push(Event(code)));
  CHECK(WaitUntil([&] { return server.service.RecordedCodes().size() == 4; }));
  sender.Stop(absl::Seconds(1));
  CHECK(server.service.RecordedCodes() == codes);
  // The second half waited behind the first (backing off), both spooled.
  CHECK(server.service.Calls() ==
        std::vector<std::string>{"test-1", "test-1.0", "test-1.0", "test-1.1"});
  CHECK(sender.Stats().batches_spooled == 2);
  CHECK(sender.Stats().dropped_refused == 0);
  CHECK(spool.empty());
}

TEST_CASE("batches are cut to the byte cap so that each fits the service's receive limit",
          "[edge/clicks][sender]") {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 24);
  GrpcClickTransport transport(server.channel);
  ClickSenderOptions options = FastOptions();
  options.batch_size = 1000;
  options.max_batch_bytes = 16 * 1024;
  options.flush_interval = absl::Milliseconds(20);
  ClickSender sender(&queue, &spool, &transport, options);
  sender.Start();
  const std::string ua(kMaxClickHeaderBytes, 'u');
  const std::string referer = "https://example.com/" + std::string(kMaxClickHeaderBytes - 20, 'r');
  std::vector<std::string> codes = Codes("b", 200);
  for (const std::string& code : codes) {
    REQUIRE(queue.Push(MakeClickEvent(code, absl::Now(), "2001:db8::1", ua, referer, 302)));
  }
  CHECK(WaitUntil([&] { return server.service.RecordedCodes().size() == codes.size(); }));
  sender.Stop(absl::Seconds(1));
  CHECK(server.service.RecordedCodes() == codes);
  const std::vector<size_t> sizes = server.service.RequestBytes();
  CHECK(sizes.size() >= 200 * 1000 / (16 * 1024));
  for (size_t size : sizes) CHECK(size <= options.max_batch_bytes);
}

TEST_CASE("an unreadable spool record is dropped and counted and the batches behind it sent",
          "[edge/clicks][sender]") {
  FakeClickServer server;
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 20);
  GrpcClickTransport transport(server.channel);
  ClickSender sender(&queue, &spool, &transport, FastOptions());
  // Damage: a field-2 entry cut short after two whole ones.
  ClickBatch damaged;
  damaged.id = "old-1";
  for (const std::string& code : Codes("d", 2)) damaged.events.push_back(Event(code));
  std::string bytes = EncodeClickBatch(damaged) + "\x12\x40xx";
  spool.AppendRawForTest(bytes);
  ClickBatch good;
  good.id = "old-2";
  good.events.push_back(Event("g0"));
  REQUIRE(spool.Append(good).ok());
  sender.Start();
  CHECK(WaitUntil([&] { return spool.empty(); }));
  REQUIRE(queue.Push(Event("n0")));
  CHECK(WaitUntil([&] { return server.service.RecordedCodes().size() == 2; }));
  sender.Stop(absl::Seconds(1));
  CHECK(server.service.RecordedCodes() == std::vector<std::string>{"g0", "n0"});
  CHECK(spool.Stats().unreadable_records == 1);
  CHECK(spool.Stats().unreadable_events == 2);
  // Never offered to the service, never tried again.
  for (const std::string& id : server.service.Calls()) CHECK(id != "old-1");
}

TEST_CASE("a batch an older edge spooled with bytes that are not UTF-8 is replayed clean",
          "[edge/clicks][sender]") {
  // What an edge before the text fields became bytes wrote: the user's
  // report (User-Agent \xff\xfe), which that edge could never read back.
  char templ[] = "/tmp/click_sender_test.XXXXXX";
  REQUIRE(mkdtemp(templ) != nullptr);
  v1::RecordClicksRequest old;
  old.set_batch_id("0123456789abcdef-1");
  v1::ClickEvent* e = old.add_events();
  e->set_code("abc");
  e->mutable_time()->set_seconds(1893456000);
  e->set_client_ip("198.51.100.7");
  e->set_user_agent("\xFF\xFE");
  e->set_referer(std::string("https://r.example/\0", 19));
  e->set_http_status(302);
  std::ofstream(std::string(templ) + "/clicks-00000000000000000001.spool", std::ios::binary)
      << EncodeSpoolRecord(old.SerializeAsString());
  FakeClickServer server;
  FileClickSpoolOptions spool_options;
  spool_options.dir = templ;
  {
    absl::StatusOr<std::unique_ptr<ClickSpool>> spool = OpenFileClickSpool(spool_options);
    REQUIRE(spool.ok());
    ClickQueue queue(ClickQueueOptions{});
    GrpcClickTransport transport(server.channel);
    ClickSender sender(&queue, spool->get(), &transport, FastOptions());
    sender.Start();
    CHECK(WaitUntil([&] { return (*spool)->empty(); }));
    sender.Stop(absl::Seconds(1));
  }
  const std::vector<v1::ClickEvent> events = server.service.RecordedEvents();
  REQUIRE(events.size() == 1);
  CHECK(events[0].user_agent() == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(events[0].referer() == "https://r.example/\xEF\xBF\xBD");
  CHECK(server.service.Recorded() == std::vector<std::string>{"0123456789abcdef-1"});
  std::filesystem::remove_all(templ);
}

// In-memory transport for the TSan run (gRPC's own libraries are not
// instrumented, so concurrency tests keep them out): records batches by id
// like the service, fails the first `fail_first` calls.
class RecordingTransport : public ClickTransport {
 public:
  explicit RecordingTransport(int fail_first) : fail_left_(fail_first) {}
  absl::StatusOr<ClickSendResult> Send(const ClickBatch& batch, absl::Duration) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_left_ > 0) {
      --fail_left_;
      return absl::UnavailableError("injected");
    }
    ClickSendResult result;
    if (ids_.insert(batch.id).second) {
      for (const ClickEvent& e : batch.events) codes_.push_back(e.code);
      result.accepted = static_cast<int64_t>(batch.events.size());
    }
    return result;
  }
  std::vector<std::string> codes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return codes_;
  }

 private:
  mutable std::mutex mu_;
  int fail_left_;
  std::set<std::string> ids_;
  std::vector<std::string> codes_;
};

TEST_CASE("concurrent producers feed the sender and every event arrives once",
          "[edge/clicks][sender][concurrent]") {
  ClickQueue queue(ClickQueueOptions{});
  InMemoryClickSpool spool(1 << 24);
  RecordingTransport transport(3);
  ClickSenderOptions options = FastOptions();
  options.batch_size = 100;
  ClickSender sender(&queue, &spool, &transport, options);
  sender.Start();
  std::atomic<bool> producing{true};
  std::thread scraper([&] {  // /metrics reads the figures meanwhile
    while (producing.load()) {
      (void)sender.Stats();
      (void)spool.Stats();
      (void)queue.Stats();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < 3; ++p) {
    producers.emplace_back([&queue, p] {
      for (int i = 0; i < 1000; ++i) queue.Push(Event(absl::StrCat(p, "-", i)));
    });
  }
  for (std::thread& t : producers) t.join();
  producing.store(false);
  scraper.join();
  sender.Stop(absl::Seconds(5));
  const std::vector<std::string> codes = transport.codes();
  CHECK(codes.size() == 3000);
  CHECK(std::set<std::string>(codes.begin(), codes.end()).size() == 3000);
  CHECK(sender.Stats().events_acked >= 3000);
}

}  // namespace
}  // namespace shortener::edge
