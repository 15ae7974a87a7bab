#include "lib/common/daemon_main.h"

#include <cstdio>
#include <string>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "lib/common/abseil_runtime.h"
#include "lib/common/termination_signals.h"

namespace shortener {

void StartDaemon(int argc, char** argv, const DaemonInfo& info) {
  common::DisableMutexDeadlockDetection();
  absl::SetProgramUsageMessage(info.usage);
  absl::FlagsUsageConfig usage;
  const std::string flags_file(info.flags_file);
  usage.contains_help_flags = [flags_file](absl::string_view path) {
    return absl::EndsWith(path, flags_file);
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);
  BlockTerminationSignals();
}

int DaemonExitCode(const DaemonInfo& info, const absl::Status& status) {
  if (status.ok()) return 0;
  const std::string name(info.name);
  std::fprintf(stderr, "%s: %s\n", name.c_str(), status.ToString().c_str());
  return 1;
}

}  // namespace shortener
