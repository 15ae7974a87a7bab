#include "lib/pg/conninfo.h"

#include <libpq-fe.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace shortener::pg {

absl::StatusOr<std::map<std::string, std::string>> ParseConnInfo(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  if (error != nullptr) PQfreemem(error);  // may quote the string: never shown
  if (options == nullptr) {
    return absl::InvalidArgumentError("database connection string is malformed");
  }
  std::map<std::string, std::string> set;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val != nullptr) set[o->keyword] = o->val;
  }
  PQconninfoFree(options);
  return set;
}

namespace {

// The two prefixes libpq itself recognises (fe-connect.c, uri_prefix_length).
constexpr absl::string_view kUriPrefixes[] = {"postgresql://", "postgres://"};

// Whether a URI connection string has a query ("?..."). Like libpq, the
// user info runs up to the first '@' before any '/', so a '?' in a password
// does not start the query.
bool UriHasQuery(absl::string_view uri) {
  size_t rest = 0;
  for (absl::string_view prefix : kUriPrefixes) {
    if (absl::StartsWith(uri, prefix)) rest = prefix.size();
  }
  const size_t stop = uri.find_first_of("@/", rest);
  if (stop != absl::string_view::npos && uri[stop] == '@') rest = stop + 1;
  return uri.find('?', rest) != absl::string_view::npos;
}

}  // namespace

bool IsConnInfoUri(absl::string_view conninfo) {
  for (absl::string_view prefix : kUriPrefixes) {
    if (absl::StartsWith(conninfo, prefix)) return true;
  }
  return false;
}

std::string WithConnInfoParam(const std::string& conninfo, absl::string_view keyword,
                              absl::string_view value) {
  if (!IsConnInfoUri(conninfo)) {
    const char* separator = conninfo.empty() ? "" : " ";
    return absl::StrCat(conninfo, separator, keyword, "=", value);
  }
  // A URI takes parameters in its query: "?k=v&k=v". libpq rejects an empty
  // one, so "...?" and "...&" take the next without another separator.
  const char* separator = "&";
  if (!UriHasQuery(conninfo)) {
    separator = "?";
  } else if (absl::EndsWith(conninfo, "?") || absl::EndsWith(conninfo, "&")) {
    separator = "";
  }
  return absl::StrCat(conninfo, separator, keyword, "=", value);
}

absl::StatusOr<std::string> WithConnInfoDefaults(const std::string& conninfo,
                                                 const std::vector<ConnInfoParam>& defaults) {
  absl::StatusOr<std::map<std::string, std::string>> set = ParseConnInfo(conninfo);
  if (!set.ok()) return set.status();
  std::string out = conninfo;
  for (const ConnInfoParam& param : defaults) {
    if (set->count(param.keyword) == 0) out = WithConnInfoParam(out, param.keyword, param.value);
  }
  return out;
}

const std::vector<ConnInfoParam>& TcpKeepaliveDefaults() {
  static const auto* const kDefaults = new std::vector<ConnInfoParam>{
      {"keepalives", "1"},       {"keepalives_idle", "10"},     {"keepalives_interval", "5"},
      {"keepalives_count", "3"}, {"tcp_user_timeout", "30000"},  // milliseconds
  };
  return *kDefaults;
}

int64_t ConnectTimeoutSeconds(absl::Duration timeout) {
  return std::max<int64_t>(2, absl::ToInt64Seconds(absl::Ceil(timeout, absl::Seconds(1))));
}

}  // namespace shortener::pg
