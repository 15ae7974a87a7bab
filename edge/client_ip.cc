#include "edge/client_ip.h"

#include <arpa/inet.h>

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace shortener::edge {
namespace {

absl::string_view TrimSpaces(absl::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// inet_pton needs a NUL-terminated string; addresses are short. It would
// stop at a NUL inside `text` and ignore the rest, so those are refused.
bool ParseLiteral(absl::string_view text, IpAddress* out) {
  char buf[kMaxIpTextLength];
  if (text.empty() || text.size() >= sizeof(buf)) return false;
  if (text.find('\0') != absl::string_view::npos) return false;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  IpAddress ip;
  if (text.find(':') == absl::string_view::npos) {
    if (inet_pton(AF_INET, buf, ip.bytes.data()) != 1) return false;
    *out = ip;
    return true;
  }
  if (inet_pton(AF_INET6, buf, ip.bytes.data()) != 1) return false;
  static constexpr uint8_t kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(ip.bytes.data(), kMappedPrefix, sizeof(kMappedPrefix)) == 0) {
    IpAddress v4;
    std::memcpy(v4.bytes.data(), ip.bytes.data() + 12, 4);
    *out = v4;
    return true;
  }
  ip.is_v6 = true;
  *out = ip;
  return true;
}

bool PortIsValid(absl::string_view port) {
  uint32_t value = 0;
  return !port.empty() && port.size() <= 5 && absl::SimpleAtoi(port, &value) && value <= 65535;
}

bool PrefixMatches(const IpAddress& ip, const IpAddress& base, int bits) {
  if (ip.is_v6 != base.is_v6) return false;
  const int full_bytes = bits / 8;
  if (std::memcmp(ip.bytes.data(), base.bytes.data(), full_bytes) != 0) return false;
  const int rest = bits % 8;
  if (rest == 0) return true;
  const uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (ip.bytes[full_bytes] & mask) == (base.bytes[full_bytes] & mask);
}

}  // namespace

bool ParseIpAddress(absl::string_view text, IpAddress* out) {
  text = TrimSpaces(text);
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == absl::string_view::npos) return false;
    absl::string_view rest = text.substr(close + 1);
    if (!rest.empty() && !(rest.front() == ':' && PortIsValid(rest.substr(1)))) return false;
    // Brackets hold IPv6 literals only ("[1.2.3.4]" is refused), but an
    // IPv4-mapped one is IPv4 here as it is bare.
    const absl::string_view literal = text.substr(1, close - 1);
    IpAddress ip;
    if (literal.find(':') == absl::string_view::npos || !ParseLiteral(literal, &ip)) return false;
    *out = ip;
    return true;
  }
  // One colon: IPv4 with a port. More than one: a bare IPv6 literal.
  const size_t colon = text.find(':');
  if (colon != absl::string_view::npos && text.find(':', colon + 1) == absl::string_view::npos) {
    if (!PortIsValid(text.substr(colon + 1))) return false;
    IpAddress ip;
    if (!ParseLiteral(text.substr(0, colon), &ip) || ip.is_v6) return false;
    *out = ip;
    return true;
  }
  return ParseLiteral(text, out);
}

absl::string_view FormatIpAddress(const IpAddress& ip, char (&out)[kMaxIpTextLength]) {
  if (inet_ntop(ip.is_v6 ? AF_INET6 : AF_INET, ip.bytes.data(), out, sizeof(out)) == nullptr) {
    out[0] = '\0';
  }
  return absl::string_view(out);
}

std::string IpAddressToString(const IpAddress& ip) {
  char buf[kMaxIpTextLength];
  return std::string(FormatIpAddress(ip, buf));
}

bool IsTooBroadProxyRange(const IpAddress& base, int prefix_bits) {
  if (!base.is_v6) return prefix_bits < 8;
  if (prefix_bits >= 32) return false;
  // Inside fc00::/7: the first seven bits are 1111110.
  const bool unique_local = prefix_bits >= 7 && (base.bytes[0] & 0xFE) == 0xFC;
  return !unique_local;
}

std::vector<std::string> TrustedProxies::TooBroadRanges() const {
  std::vector<std::string> out;
  for (const Range& range : ranges_) {
    if (!IsTooBroadProxyRange(range.base, range.prefix_bits)) continue;
    out.push_back(absl::StrCat(IpAddressToString(range.base), "/", range.prefix_bits));
  }
  return out;
}

absl::StatusOr<TrustedProxies> TrustedProxies::Parse(const std::vector<std::string>& cidrs) {
  TrustedProxies result;
  for (const std::string& entry : cidrs) {
    absl::string_view text = TrimSpaces(entry);
    if (text.empty()) continue;
    absl::string_view address = text;
    absl::string_view prefix;
    const size_t slash = text.find('/');
    if (slash != absl::string_view::npos) {
      address = text.substr(0, slash);
      prefix = text.substr(slash + 1);
    }
    Range range;
    // Only bare literals here: a port or brackets in a CIDR is a mistake.
    if (address.find('[') != absl::string_view::npos || !ParseLiteral(address, &range.base)) {
      return absl::InvalidArgumentError(
          absl::StrCat("trusted proxy \"", text, "\": not an IP address or CIDR range"));
    }
    const int max_bits = range.base.is_v6 ? 128 : 32;
    range.prefix_bits = max_bits;
    if (slash != absl::string_view::npos) {
      int bits = -1;
      if (prefix.empty() || prefix.size() > 3 || !absl::SimpleAtoi(prefix, &bits) || bits < 0 ||
          bits > max_bits) {
        return absl::InvalidArgumentError(
            absl::StrCat("trusted proxy \"", text, "\": prefix length must be 0..", max_bits));
      }
      range.prefix_bits = bits;
    }
    IpAddress masked = range.base;
    for (int bit = range.prefix_bits; bit < max_bits; ++bit) {
      masked.bytes[bit / 8] &= static_cast<uint8_t>(~(0x80 >> (bit % 8)));
    }
    if (!(masked == range.base)) {
      return absl::InvalidArgumentError(absl::StrCat("trusted proxy \"", text,
                                                     "\": address has bits set beyond the /",
                                                     range.prefix_bits, " prefix"));
    }
    result.ranges_.push_back(range);
  }
  return result;
}

bool TrustedProxies::Contains(const IpAddress& ip) const {
  for (const Range& range : ranges_) {
    if (PrefixMatches(ip, range.base, range.prefix_bits)) return true;
  }
  return false;
}

IpAddress ClientIp(const IpAddress& peer, absl::string_view x_forwarded_for,
                   const TrustedProxies& trusted) {
  if (x_forwarded_for.empty() || !trusted.Contains(peer)) return peer;
  IpAddress current = peer;  // the nearest hop known so far, trusted
  absl::string_view rest = x_forwarded_for;
  while (true) {
    const size_t comma = rest.rfind(',');
    const absl::string_view entry =
        comma == absl::string_view::npos ? rest : rest.substr(comma + 1);
    if (!TrimSpaces(entry).empty()) {
      IpAddress hop;
      if (!ParseIpAddress(entry, &hop)) return current;
      if (!trusted.Contains(hop)) return hop;
      current = hop;
    }
    if (comma == absl::string_view::npos) return current;
    rest = rest.substr(0, comma);
  }
}

}  // namespace shortener::edge
