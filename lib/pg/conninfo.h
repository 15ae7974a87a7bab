// libpq connection strings, in both forms libpq takes (key=value, and the
// postgresql:// or postgres:// URI): parsing them without echoing them (they
// may hold a password), and adding parameters such as connect_timeout and TCP
// keepalives, either as defaults the string can override or as overrides.
//
// Pure functions (libpq's parser, no I/O); thread-safe.
#ifndef SHORTENER_LIB_PG_CONNINFO_H_
#define SHORTENER_LIB_PG_CONNINFO_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace shortener::pg {

// One libpq connection parameter, e.g. {"connect_timeout", "5"}.
struct ConnInfoParam {
  std::string keyword;
  std::string value;
};

// The parameters `conninfo` sets (keyword -> value), in either form. Only what
// the string itself says: no defaults, no environment variables.
// INVALID_ARGUMENT "database connection string is malformed" otherwise; the
// message never echoes the string or libpq's reason (both may quote it).
absl::StatusOr<std::map<std::string, std::string>> ParseConnInfo(const std::string& conninfo);

// True for the URI form ("postgresql://..." or "postgres://...").
bool IsConnInfoUri(absl::string_view conninfo);

// `conninfo` with `keyword`=`value` appended, in the string's form. libpq
// takes the last value of a repeated keyword (in a URI's query too), so this
// overrides a value the string sets. `value` must need no quoting or
// percent-encoding (numbers, plain words).
std::string WithConnInfoParam(const std::string& conninfo, absl::string_view keyword,
                              absl::string_view value);

// `conninfo` with each of `defaults` appended that it does not set itself.
// The string's own values win; an environment variable (PGCONNECT_TIMEOUT,
// ...) does not, since libpq ranks it below the string. INVALID_ARGUMENT as
// ParseConnInfo for a malformed string.
absl::StatusOr<std::string> WithConnInfoDefaults(const std::string& conninfo,
                                                 const std::vector<ConnInfoParam>& defaults);

// TCP keepalives and a TCP user timeout, so that a connection to a server
// that vanished (host down, network partition: no FIN, no RST) fails within
// about 30 s instead of hanging in recv(2) until the kernel gives up (hours):
// keepalive probes after 10 s idle, every 5 s, 3 lost ones drop the
// connection; sent data unacknowledged for 30 s drops it too. libpq applies
// them to TCP connections only (not unix sockets).
const std::vector<ConnInfoParam>& TcpKeepaliveDefaults();

// libpq's connect_timeout for a wait of `timeout`: whole seconds, rounded up,
// at least 2 (libpq treats 1 as 2; 0 would mean forever).
int64_t ConnectTimeoutSeconds(absl::Duration timeout);

}  // namespace shortener::pg

#endif  // SHORTENER_LIB_PG_CONNINFO_H_
