// A google.api.http path template ("/v1/links/{code}", "/v1/links/{link.code}",
// "/v1/apiKeys/{id}:revoke", "/v1/links/{code}/qr.png") and matching request
// paths against it.
//
// The subset this API needs: literal segments, variables of exactly one
// segment ({field} or {field=*}; the field a dotted path), and a custom verb
// (":revoke" after the last segment). Parse refuses the rest of the grammar
// (bare "*" and "**", variables over several segments) with a message
// naming the template, so an annotation the router would mishandle stops
// the start instead.
//
// Request paths are split at '/' before percent-decoding (so "%2F" inside a
// code stays one segment); SplitPath does both, once per request, and
// Match compares decoded segments.
//
// Thread safety: immutable after Parse; SplitPath is pure.
#ifndef SHORTENER_SERVICES_SHORTEN_HTTP_PATH_TEMPLATE_H_
#define SHORTENER_SERVICES_SHORTEN_HTTP_PATH_TEMPLATE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace shortener::service::http {

// A variable's field path and the decoded text the request put there.
using PathBindings = std::vector<std::pair<std::string, std::string>>;

// The decoded segments of a request path ("/v1/links/a%20b" -> {"v1",
// "links", "a b"}). INVALID_ARGUMENT naming the problem for a path that is
// not absolute, holds an empty segment ("//", a trailing '/'), or has a '%'
// not followed by two hex digits. At most kMaxPathSegments segments.
absl::StatusOr<std::vector<std::string>> SplitPath(absl::string_view path);
inline constexpr size_t kMaxPathSegments = 32;

class PathTemplate {
 public:
  // INVALID_ARGUMENT naming `text` and what is wrong with it.
  static absl::StatusOr<PathTemplate> Parse(absl::string_view text);

  // The bindings if `segments` (SplitPath's) match, else nullopt. The verb,
  // if the template has one, must end the last segment after a ':'.
  std::optional<PathBindings> Match(const std::vector<std::string>& segments) const;

  // The template as written.
  const std::string& text() const { return text_; }
  // The field paths of its variables, in order.
  std::vector<std::string> Variables() const;
  const std::string& verb() const { return verb_; }
  // How specific it is, for ordering: templates with a verb, then with more
  // literal segments, come first.
  std::pair<int, int> Specificity() const;

 private:
  struct Segment {
    bool variable = false;
    std::string text;  // the literal, or the variable's field path
  };
  PathTemplate() = default;

  std::string text_;
  std::vector<Segment> segments_;
  std::string verb_;  // without the ':'; empty: none
};

}  // namespace shortener::service::http

#endif  // SHORTENER_SERVICES_SHORTEN_HTTP_PATH_TEMPLATE_H_
