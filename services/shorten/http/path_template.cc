#include "services/shorten/http/path_template.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace shortener::service::http {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Field paths: IDENT { "." IDENT }, IDENT = letter { letter | digit | "_" }.
bool IsFieldPath(absl::string_view path) {
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    if (part.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(part[0]))) return false;
    for (char c : part) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    }
  }
  return true;
}

bool IsLiteral(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    const bool unreserved = absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                            c == '.' || c == '_' || c == '~';
    if (!unreserved) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SplitPath(absl::string_view path) {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError("path: must start with '/'");
  }
  std::vector<std::string> segments;
  for (absl::string_view raw : absl::StrSplit(path.substr(1), '/')) {
    if (raw.empty()) return absl::InvalidArgumentError("path: empty segment");
    if (segments.size() == kMaxPathSegments) {
      return absl::InvalidArgumentError(
          absl::StrCat("path: more than ", kMaxPathSegments, " segments"));
    }
    std::string decoded;
    decoded.reserve(raw.size());
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '%') {
        decoded.push_back(raw[i]);
        continue;
      }
      const int hi = i + 2 < raw.size() ? HexValue(raw[i + 1]) : -1;
      const int lo = hi >= 0 ? HexValue(raw[i + 2]) : -1;
      if (lo < 0) {
        return absl::InvalidArgumentError("path: '%' not followed by two hex digits");
      }
      decoded.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    }
    segments.push_back(std::move(decoded));
  }
  return segments;
}

absl::StatusOr<PathTemplate> PathTemplate::Parse(absl::string_view text) {
  auto refuse = [text](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("path template \"", text, "\": ", why));
  };
  if (text.size() < 2 || text[0] != '/') return refuse("must start with '/' and name a path");
  PathTemplate parsed;
  parsed.text_ = std::string(text);
  absl::string_view rest = text.substr(1);
  // The verb follows the last ':' outside a variable.
  const size_t last_close = rest.rfind('}');
  const size_t colon = rest.rfind(':');
  if (colon != absl::string_view::npos &&
      (last_close == absl::string_view::npos || colon > last_close)) {
    parsed.verb_ = std::string(rest.substr(colon + 1));
    if (!IsLiteral(parsed.verb_)) return refuse("the verb after ':' must be a literal");
    rest = rest.substr(0, colon);
  }
  for (absl::string_view segment : absl::StrSplit(rest, '/')) {
    Segment s;
    if (!segment.empty() && segment.front() == '{') {
      if (segment.back() != '}') return refuse("a variable must be a whole segment");
      absl::string_view inner = segment.substr(1, segment.size() - 2);
      const size_t eq = inner.find('=');
      if (eq != absl::string_view::npos) {
        if (inner.substr(eq + 1) != "*") {
          return refuse("only one-segment variables ({field} or {field=*}) are supported");
        }
        inner = inner.substr(0, eq);
      }
      if (!IsFieldPath(inner)) return refuse("a variable must name a field path");
      s.variable = true;
      s.text = std::string(inner);
    } else if (IsLiteral(segment)) {
      s.text = std::string(segment);
    } else {
      return refuse(absl::StrCat("segment \"", segment,
                                 "\" is neither a literal nor a one-segment variable"));
    }
    parsed.segments_.push_back(std::move(s));
  }
  return parsed;
}

std::optional<PathBindings> PathTemplate::Match(const std::vector<std::string>& segments) const {
  if (segments.size() != segments_.size()) return std::nullopt;
  PathBindings bindings;
  for (size_t i = 0; i < segments.size(); ++i) {
    absl::string_view value = segments[i];
    if (i + 1 == segments.size() && !verb_.empty()) {
      // "abc:revoke": the verb after the last ':'.
      const size_t colon = value.rfind(':');
      if (colon == absl::string_view::npos || value.substr(colon + 1) != verb_) {
        return std::nullopt;
      }
      value = value.substr(0, colon);
    }
    const Segment& s = segments_[i];
    if (!s.variable) {
      if (value != s.text) return std::nullopt;
      continue;
    }
    if (value.empty()) return std::nullopt;
    bindings.emplace_back(s.text, std::string(value));
  }
  return bindings;
}

std::vector<std::string> PathTemplate::Variables() const {
  std::vector<std::string> out;
  for (const Segment& s : segments_) {
    if (s.variable) out.push_back(s.text);
  }
  return out;
}

std::pair<int, int> PathTemplate::Specificity() const {
  int literals = 0;
  for (const Segment& s : segments_) literals += s.variable ? 0 : 1;
  return {verb_.empty() ? 0 : 1, literals};
}

}  // namespace shortener::service::http
