// Custom aliases (vanity codes): the syntax every code a client may send
// shares, and the rules for creating an alias. The one owner of both: the
// service's code parsing, the edge's request classification and the
// in-memory resolver call these rather than spell the character set again.
//
// Thread safety: pure functions; HasAliasSyntax and IsAliasChar allocate
// nothing (the edge calls them on every request).
#ifndef SHORTENER_LIB_CODEC_ALIAS_H_
#define SHORTENER_LIB_CODEC_ALIAS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace shortener::codec {

class ShortCodec;

// Longest alias, in characters (= bytes: the characters are ASCII).
inline constexpr size_t kMaxAliasLength = 64;

// Whether `c` may appear in an alias: [A-Za-z0-9_-]. Generated codes use the
// letters and digits of this set.
constexpr bool IsAliasChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// Whether `s` has alias syntax: 1 to kMaxAliasLength characters, each
// IsAliasChar. Every generated code has it too (ShortCodec::IsGeneratedShape
// is a subset), so this is the syntax of anything that may name a link;
// whether an alias may be created is ValidateAlias's question.
inline bool HasAliasSyntax(absl::string_view s) {
  if (s.empty() || s.size() > kMaxAliasLength) return false;
  for (char c : s) {
    if (!IsAliasChar(c)) return false;
  }
  return true;
}

// Whether `alias` may be created: alias syntax (messages name the length or
// the first bad character), not a reserved path (healthz, readyz, metrics,
// api, favicon.ico, robots.txt, static, admin, login, ..., compared
// case-insensitively), and not of the generated shape of `codec` (so the
// edge's prefilter stays exact: a request either is a generated code or is
// looked up as an alias). Returns OK or INVALID_ARGUMENT with a message
// starting "custom_alias: " naming the rule.
absl::Status ValidateAlias(absl::string_view alias, const ShortCodec& codec);

}  // namespace shortener::codec

#endif  // SHORTENER_LIB_CODEC_ALIAS_H_
