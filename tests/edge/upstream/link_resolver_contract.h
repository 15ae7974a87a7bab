// The LinkResolver contract suite (link_resolver_contract.cc) is written
// once and compiled into one test binary per implementation; each defines
// NewContractUpstream(), which gives the resolver under test together with
// the means to arrange what it should answer: InMemoryLinkResolver's table
// (in_memory_link_resolver_test.cc), or a real shorten-service on a private
// PostgreSQL cluster for ServiceClient (service_client_test.cc).
#ifndef SHORTENER_TESTS_EDGE_UPSTREAM_LINK_RESOLVER_CONTRACT_H_
#define SHORTENER_TESTS_EDGE_UPSTREAM_LINK_RESOLVER_CONTRACT_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "edge/upstream/link_resolver.h"

namespace shortener::edge::testing {

// A link to create through ContractUpstream::CreateLink.
struct ContractLink {
  explicit ContractLink(std::string url) : long_url(std::move(url)) {}
  std::string long_url;  // already normalised: it comes back unchanged
  int redirect_status = 302;
  std::optional<absl::Time> expire_time;  // after Now()
  std::string alias;                      // empty: a generated code
};

// An upstream and the resolver that asks it.
class ContractUpstream {
 public:
  virtual ~ContractUpstream() = default;
  virtual LinkResolver& resolver() = 0;
  // Creates `link` upstream; returns its code (the alias when it has one).
  virtual std::string CreateLink(const ContractLink& link) = 0;
  virtual void Revoke(const std::string& code) = 0;
  // A code of the generated shape, passing the check character, that no
  // link has.
  virtual std::string UnknownCode() = 0;
  // The upstream's wall-clock time (by which it judges expiry).
  virtual absl::Time Now() = 0;
  // Lets `duration` pass on the upstream's wall clock.
  virtual void Elapse(absl::Duration duration) = 0;
  // Takes the upstream away (nothing answers) / brings it back with the
  // links it had.
  virtual void Stop() = 0;
  virtual void Restart() = 0;
};

// Defined by each binary that links link_resolver_contract.cc.
std::unique_ptr<ContractUpstream> NewContractUpstream();

// One reply and the thread `done` ran on.
struct Answered {
  ResolveReply reply;
  std::thread::id thread;
};
struct AnsweredBatch {
  std::vector<ResolveReply> replies;
  std::thread::id thread;
};

// Calls resolver.Resolve / ResolveBatch and waits for `done` (REQUIREs it
// within 30 s).
Answered ResolveAndWait(LinkResolver& resolver, const std::string& code,
                        LinkResolver::Clock::time_point deadline);
Answered ResolveAndWait(LinkResolver& resolver, const std::string& code);  // 10 s deadline
AnsweredBatch ResolveBatchAndWait(LinkResolver& resolver, std::vector<std::string> codes,
                                  LinkResolver::Clock::time_point deadline);

// Polls `condition` every 10 ms until it holds or `timeout` passes.
template <typename Condition>
bool Eventually(Condition condition, absl::Duration timeout = absl::Seconds(20)) {
  const auto until = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace shortener::edge::testing

#endif  // SHORTENER_TESTS_EDGE_UPSTREAM_LINK_RESOLVER_CONTRACT_H_
