// shortenctl's commands that end links: `delete CODE`, and the bulk walks
// `delete --label k=v|--filter F` and `revoke --label k=v|--filter F`
// (DeleteLinks, RevokeLinks: one call after another until the service says
// every matching link was reached). `revoke CODE` is commands.cc's.
#ifndef SHORTENER_SERVICES_SHORTENCTL_BULK_COMMANDS_H_
#define SHORTENER_SERVICES_SHORTENCTL_BULK_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "services/shortenctl/commands.h"

namespace shortener::ctl {

// True when `command` with these options is a bulk walk (delete or revoke
// with --label or --filter).
bool IsBulkCommand(absl::string_view command, const Options& options);

// `delete CODE`: prints "deleted CODE" (--json: {"code":..,"deleted":true}).
int RunDelete(const Options& options, const std::vector<std::string>& args, Console io);

// The bulk walk of `command` (delete or revoke): prints each code as the
// service answers it, one per line ("deleted CODE" / "revoked CODE"; --json:
// one object per line), then "shortenctl: deleted N links" on err. A call
// that fails stops the walk: what was done is printed, and err says the
// --page_token to go on from.
int RunBulk(absl::string_view command, const Options& options, const std::vector<std::string>& args,
            Console io);

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_BULK_COMMANDS_H_
