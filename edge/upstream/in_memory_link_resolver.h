// InMemoryLinkResolver: a LinkResolver (link_resolver.h) over a table of
// links held in memory, the twin of ServiceClient for everything above the
// seam. Passes the same contract suite; answers come from a thread of its
// own, as gRPC's callbacks do, so callers meet the same threading.
//
// Beyond the contract, what a test of the layers above needs from an
// upstream:
//  - SetAvailable(false): an outage. Every call (and every call waiting)
//    is answered kUnavailable ("UNAVAILABLE: upstream unavailable") and
//    Ready() is false, until SetAvailable(true).
//  - Hold() / Release(): a slow upstream. Calls made while held wait
//    unanswered until Release() (or their deadline, then kUnavailable with
//    DEADLINE_EXCEEDED, as a gRPC call ends).
//  - Calls() / WaitForCalls(): what was asked, in order, one entry per call
//    (a Resolve is a call of one code).
// Expiry is judged against `clock` when a call is answered: a link whose
// expire_time is at or before clock.Now() is kExpired, as the service
// judges it.
//
// Thread safety: every method is thread-safe; `done` runs on the
// resolver's thread, never under its lock. The destructor answers the
// calls still waiting (kUnavailable) before it returns.
#ifndef SHORTENER_EDGE_UPSTREAM_IN_MEMORY_LINK_RESOLVER_H_
#define SHORTENER_EDGE_UPSTREAM_IN_MEMORY_LINK_RESOLVER_H_

#include <condition_variable>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "edge/upstream/link_resolver.h"
#include "lib/common/clock.h"

namespace shortener::edge {

// One link as the upstream knows it.
struct InMemoryLink {
  std::string location;       // the long URL
  int redirect_status = 302;  // 301, 302, 307 or 308
  std::optional<absl::Time> expire_time;
  bool revoked = false;
};

class InMemoryLinkResolver final : public LinkResolver {
 public:
  // `clock` must outlive the resolver.
  explicit InMemoryLinkResolver(const shortener::Clock& clock = SystemClock());
  ~InMemoryLinkResolver() override;
  InMemoryLinkResolver(const InMemoryLinkResolver&) = delete;
  InMemoryLinkResolver& operator=(const InMemoryLinkResolver&) = delete;

  void Resolve(absl::string_view code, Clock::time_point deadline, Done done) override;
  void ResolveBatch(std::vector<std::string> codes, Clock::time_point deadline,
                    BatchDone done) override;
  bool Ready() const override;

  // Adds or replaces the link of `code`.
  void SetLink(const std::string& code, InMemoryLink link);
  // A 302 to `location`, no expiry.
  void SetLink(const std::string& code, const std::string& location) {
    InMemoryLink link;
    link.location = location;
    SetLink(code, std::move(link));
  }
  // Marks the link of `code` revoked; false if there is none.
  bool Revoke(const std::string& code);
  // Makes the upstream judge `code` malformed (kInvalid) although it has
  // the syntax: a service's rules may be stricter than this edge's (a newer
  // service during a rolling deploy).
  void SetMalformed(const std::string& code);

  void SetAvailable(bool available);
  void Hold();
  void Release();

  // The codes of every call made, in order.
  std::vector<std::vector<std::string>> Calls() const;
  // Waits until `n` calls were made; false after `timeout`.
  bool WaitForCalls(size_t n, absl::Duration timeout = absl::Seconds(10)) const;

 private:
  struct Call {
    std::vector<std::string> codes;
    Clock::time_point deadline;
    Clock::time_point start;
    Done one;         // set for Resolve
    BatchDone batch;  // set for ResolveBatch
  };

  void Add(Call call);
  // What the table says about `code` now. With mu_ held.
  ResolveReply AnswerLocked(const std::string& code) const;
  // The resolver's thread: answers calls as the switches allow.
  void Work();

  const shortener::Clock& clock_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  // Guarded by mu_:
  std::map<std::string, InMemoryLink> links_;
  std::set<std::string> malformed_;
  std::vector<Call> waiting_;
  std::vector<std::vector<std::string>> calls_;
  bool available_ = true;
  bool held_ = false;
  bool stopping_ = false;
  std::thread worker_;  // last: starts once the rest is built
};

}  // namespace shortener::edge

#endif  // SHORTENER_EDGE_UPSTREAM_IN_MEMORY_LINK_RESOLVER_H_
