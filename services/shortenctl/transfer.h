// `import` and `export` as Run dispatches them: the usage checks of the
// flags other commands own, the API key, then RunImport or RunExport.
// Not thread-safe (one run at a time).
#ifndef SHORTENER_SERVICES_SHORTENCTL_TRANSFER_H_
#define SHORTENER_SERVICES_SHORTENCTL_TRANSFER_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "services/shortenctl/commands.h"

namespace shortener::ctl {

// Whether `command` is import or export.
bool IsTransferCommand(absl::string_view command);

// Runs import or export (`command`) with `args`; returns the exit code.
int RunTransfer(const std::string& command, const Options& options,
                const std::vector<std::string>& args, Console io);

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_TRANSFER_H_
