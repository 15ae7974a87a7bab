// User-Agent classification for click statistics: browser family and major
// version, OS family and version, device type, and whether the client is a
// bot (crawlers, link-preview fetchers, HTTP libraries), so that bots are
// counted apart from human clicks.
//
// Table-driven: an ordered list of rules (substring / token matches), the
// first match wins; no regular expressions on the hot path. Unknown agents
// are "Other" on "Other", device desktop, not a bot (an empty User-Agent is
// a bot: every browser sends one).
//
// What the results mean (docs/analytics.md has the full rules):
//  - `browser` and `os` come from fixed tables, never from the input, so the
//    set of values statistics group by stays bounded. A bot's `browser` is
//    its name ("Googlebot", "WhatsApp", "curl"); a bot known only by a
//    generic word ("...bot", "crawler", "spider") is "Other".
//  - A bot's `os` is "Other" and its `os_version` empty: what crawlers claim
//    (Googlebot smartphone "is" Android 6.0.1) is a disguise.
//  - Versions are what the agent sends, and browsers freeze some: Windows 11
//    says NT 10.0 ("10"), Chrome 110+ says macOS 10.15.7 and Android 10.
//  - iPadOS 13+ Safari sends the macOS desktop User-Agent: it is macOS /
//    desktop here, as the header cannot tell them apart.
//  - os_version is at most three dotted components of at most six digits,
//    or the name of a Windows release ("Vista", "XP").
//
// Thread safety: stateless functions over constant tables.
#ifndef SHORTENER_LIB_USERAGENT_USER_AGENT_H_
#define SHORTENER_LIB_USERAGENT_USER_AGENT_H_

#include <cstddef>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace shortener::useragent {

enum class DeviceType { kDesktop, kMobile, kTablet, kBot };

// "desktop", "mobile", "tablet", "bot".
absl::string_view DeviceTypeName(DeviceType type);

struct ClientInfo {
  std::string browser = "Other";  // "Chrome", "Safari", "Firefox", "Edge", "Samsung Internet",
                                  // "WeChat", "Android WebView", "curl", "Googlebot", ...
  int browser_major = 0;          // 0: unknown
  std::string os = "Other";       // "Windows", "macOS", "iOS", "iPadOS", "Android", "Linux",
                                  // "ChromeOS", ...
  std::string os_version;         // "17.4", "14", "10"; empty: unknown
  DeviceType device = DeviceType::kDesktop;
  bool bot = false;  // crawler, preview fetcher or HTTP library; device is kBot

  friend bool operator==(const ClientInfo& a, const ClientInfo& b) {
    return a.browser == b.browser && a.browser_major == b.browser_major && a.os == b.os &&
           a.os_version == b.os_version && a.device == b.device && a.bot == b.bot;
  }
};

// Classifies a User-Agent header value (at most the first 1024 bytes are
// looked at). Never fails.
ClientInfo Classify(absl::string_view user_agent);

// Classify with a memo, for the events of one batch: clients repeat their
// User-Agent (a campaign's audience runs a few hundred phone builds), and
// Classify costs microseconds where finding an agent seen before costs tens
// of nanoseconds (docs/benchmarks.md, Rollups). Keeps at most `max_agents`
// distinct agents, then classifies the others without keeping them, so a
// batch of all-different agents costs what Classify does.
//
// Thread safety: none; one per batch. The memo keeps views of the agents it
// is given: each must outlive it.
class BatchClassifier {
 public:
  explicit BatchClassifier(size_t max_agents) : max_agents_(max_agents) {}

  // Equal to Classify(user_agent); valid until the next call.
  const ClientInfo& Classify(absl::string_view user_agent);

  size_t agents_kept() const { return known_.size(); }

 private:
  const size_t max_agents_;
  absl::flat_hash_map<absl::string_view, ClientInfo> known_;
  ClientInfo unkept_;
};

}  // namespace shortener::useragent

#endif  // SHORTENER_LIB_USERAGENT_USER_AGENT_H_
