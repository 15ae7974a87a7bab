// UrlPolicy's deny list replaced while Normalize runs on other threads (the
// service reloads the deny list file under load). Every answer must come
// from one whole list, old or new; run under TSan with the `concurrent`
// label. Reader threads only count; the checks run on the test thread.
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "lib/url/url_policy.h"

namespace shortener::url {
namespace {

struct ReaderCounts {
  int calls = 0;
  int allowed = 0;
  int refused = 0;
  int wrong = 0;  // an answer no whole list gives
};

TEST_CASE("Normalize on several threads while the deny list is swapped", "[lib/url][concurrent]") {
  // List A denies a.example; list B denies b.example. A reader asks about
  // both hosts: under A only the first is refused, under B only the second.
  const std::vector<std::string> list_a = {"a.example", "x.example"};
  const std::vector<std::string> list_b = {"b.example"};
  UrlPolicyOptions options;
  options.denied_domains = list_a;
  UrlPolicy policy(options);

  constexpr int kReaders = 3;
  std::atomic<bool> done{false};
  std::vector<ReaderCounts> counts(kReaders);
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&policy, &done, &counts, r] {
      ReaderCounts& c = counts[r];
      while (!done.load()) {
        for (const char* host : {"a.example", "b.example", "sub.a.example", "ok.example"}) {
          const absl::StatusOr<std::string> result =
              policy.Normalize(std::string("https://") + host + "/path");
          ++c.calls;
          if (result.ok()) {
            ++c.allowed;
            if (*result != std::string("https://") + host + "/path") ++c.wrong;
          } else {
            ++c.refused;
            if (!absl::StrContains(result.status().message(), "is on the deny list") ||
                absl::StrContains(host, "ok.example")) {
              ++c.wrong;
            }
          }
        }
      }
    });
  }
  // Swaps, each a whole new list; a short pause lets the readers see each.
  constexpr int kSwaps = 400;
  for (int i = 0; i < kSwaps; ++i) {
    policy.SetDeniedDomains(i % 2 == 0 ? list_b : list_a);
    absl::SleepFor(absl::Microseconds(200));
  }
  policy.SetDeniedDomains(list_b);  // the last one wins for every thread
  absl::SleepFor(absl::Milliseconds(20));
  done = true;
  for (std::thread& reader : readers) reader.join();

  ReaderCounts total;
  for (const ReaderCounts& c : counts) {
    total.calls += c.calls;
    total.allowed += c.allowed;
    total.refused += c.refused;
    total.wrong += c.wrong;
  }
  INFO("calls " << total.calls << ", allowed " << total.allowed << ", refused " << total.refused);
  CHECK(total.wrong == 0);
  CHECK(total.calls > 0);
  CHECK(total.refused > 0);
  CHECK(total.allowed > 0);
  CHECK(policy.DeniedDomainCount() == 1);
  CHECK(policy.Normalize("https://a.example/").ok());
  CHECK_FALSE(policy.Normalize("https://b.example/").ok());
}

}  // namespace
}  // namespace shortener::url
