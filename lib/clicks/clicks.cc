#include "lib/clicks/clicks.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "lib/common/sha256.h"
#include "lib/url/host_name.h"

namespace shortener::clicks {
namespace {

// Longest text an address literal can have (IPv6 with an embedded IPv4).
constexpr size_t kMaxIpText = INET6_ADDRSTRLEN;

struct ParsedIp {
  int family = 0;  // AF_INET, AF_INET6, or 0 for invalid
  unsigned char bytes[16] = {};
};

ParsedIp ParseIp(absl::string_view ip) {
  ParsedIp parsed;
  // inet_pton needs a C string; anything longer than an address is not one.
  // A NUL byte would end the C string early and let a prefix pass.
  if (ip.empty() || ip.size() >= kMaxIpText || ip.find('\0') != absl::string_view::npos) {
    return parsed;
  }
  char text[kMaxIpText];
  std::memcpy(text, ip.data(), ip.size());
  text[ip.size()] = '\0';
  if (inet_pton(AF_INET, text, parsed.bytes) == 1) {
    parsed.family = AF_INET;
  } else if (inet_pton(AF_INET6, text, parsed.bytes) == 1) {
    static constexpr unsigned char kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(parsed.bytes, kMappedPrefix, sizeof kMappedPrefix) == 0) {
      // A dual-stack socket reports IPv4 clients this way: they are IPv4
      // clients, anonymised as such.
      std::memmove(parsed.bytes, parsed.bytes + 12, 4);
      parsed.family = AF_INET;
    } else {
      parsed.family = AF_INET6;
    }
  }
  return parsed;
}

std::string FormatIp(const ParsedIp& ip) {
  if (ip.family == AF_INET) {
    // What inet_ntop writes, without its sprintf: an eighth of the service's
    // CPU samples per click went to formatting and parsing addresses.
    return absl::StrCat(unsigned{ip.bytes[0]}, ".", unsigned{ip.bytes[1]}, ".",
                        unsigned{ip.bytes[2]}, ".", unsigned{ip.bytes[3]});
  }
  char text[kMaxIpText];
  if (ip.family == 0 || inet_ntop(ip.family, ip.bytes, text, sizeof text) == nullptr) return "";
  return text;
}

// What a referrer's host name may hold: host name characters, the dots
// between labels, and "_", which the URL policy refuses in targets but
// browsers send in referrers (statistics count what was sent).
bool IsReferrerHostChar(char c) { return url::IsHostNameChar(c) || c == '.' || c == '_'; }

}  // namespace

std::string CanonicalIp(absl::string_view ip) { return FormatIp(ParseIp(ip)); }

std::string AnonymizeIp(absl::string_view ip) {
  ParsedIp parsed = ParseIp(ip);
  if (parsed.family == AF_INET) {
    parsed.bytes[3] = 0;
  } else if (parsed.family == AF_INET6) {
    std::memset(parsed.bytes + 6, 0, 10);  // keep the /48
  }
  return FormatIp(parsed);
}

std::string ClientId(absl::string_view ip, absl::string_view user_agent) {
  std::string input = absl::StrCat(ip, "\n", user_agent);
  const Sha256Bytes digest = Sha256(input);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), 16));
}

std::string ReferrerHost(absl::string_view referer) {
  const absl::string_view host = url::HostOfUrl(referer);
  if (host.empty() || host.size() > url::kMaxHostNameLength) return "";
  if (host.front() == '[') {
    // The literal between the brackets must be an IPv6 address.
    if (ParseIp(host.substr(1, host.size() - 2)).family != AF_INET6) return "";
  } else if (!std::all_of(host.begin(), host.end(), IsReferrerHostChar)) {
    return "";
  }
  return absl::AsciiStrToLower(host);
}

absl::Time TruncateToHour(absl::Time t) {
  // Floor, not truncation toward zero: times before 1970 go down too.
  return absl::UnixEpoch() + absl::Floor(t - absl::UnixEpoch(), absl::Hours(1));
}

absl::Time MonthStart(absl::Time t) {
  return absl::FromCivil(absl::ToCivilMonth(t, absl::UTCTimeZone()), absl::UTCTimeZone());
}

std::string DeviceColumn(useragent::DeviceType device) {
  // Spelled here rather than through useragent::DeviceTypeName: these are
  // the values the schema accepts, and this library needs only the
  // classifier's types, not the classifier.
  switch (device) {
    case useragent::DeviceType::kDesktop:
      return "desktop";
    case useragent::DeviceType::kMobile:
      return "mobile";
    case useragent::DeviceType::kTablet:
      return "tablet";
    case useragent::DeviceType::kBot:
      return "bot";
  }
  return "desktop";  // not reached: every enumerator is handled above
}

ClickRow MakeClickRow(const ClickEvent& event, const useragent::ClientInfo& client,
                      bool keep_full_ip) {
  ClickRow row;
  row.link_id = event.link_id;
  row.time = event.time;
  // A bot flag without a bot device (or the reverse) would count a click on
  // one side and describe it on the other: either one makes it a bot.
  row.bot = client.bot || client.device == useragent::DeviceType::kBot;
  row.client_id = ClientId(event.client_ip, event.user_agent);
  row.ip = keep_full_ip ? CanonicalIp(event.client_ip) : AnonymizeIp(event.client_ip);
  row.browser = client.browser;
  row.browser_major = client.browser_major;
  row.os = client.os;
  row.os_version = client.os_version;
  row.device = row.bot ? "bot" : DeviceColumn(client.device);
  row.referrer_host = ReferrerHost(event.referer);
  return row;
}

std::vector<HourlyCount> GroupHourly(absl::Span<const ClickRow> rows) {
  // Ordered map: the sorted output comes for free; batches are at most a
  // few thousand rows.
  std::map<std::tuple<int64_t, absl::Time, bool>, int64_t> counts;
  for (const ClickRow& row : rows) ++counts[{row.link_id, TruncateToHour(row.time), row.bot}];
  std::vector<HourlyCount> grouped;
  grouped.reserve(counts.size());
  for (const auto& [key, count] : counts) {
    grouped.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), count});
  }
  return grouped;
}

std::vector<HourlyCount> SumHourlyCounts(
    absl::Span<const std::vector<HourlyCount>* const> batches) {
  if (batches.size() == 1) return *batches[0];
  std::vector<HourlyCount> all;
  for (const std::vector<HourlyCount>* counts : batches) {
    all.insert(all.end(), counts->begin(), counts->end());
  }
  auto key = [](const HourlyCount& c) { return std::make_tuple(c.link_id, c.hour, c.bot); };
  std::sort(all.begin(), all.end(),
            [&key](const HourlyCount& a, const HourlyCount& b) { return key(a) < key(b); });
  std::vector<HourlyCount> summed;
  for (const HourlyCount& c : all) {
    if (!summed.empty() && key(summed.back()) == key(c)) {
      summed.back().count += c.count;
    } else {
      summed.push_back(c);
    }
  }
  return summed;
}

}  // namespace shortener::clicks
