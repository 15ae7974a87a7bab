// shortenctl: command-line client of shorten-service. Parses the command
// line (args.h), turns the flags into Options (ctl_flags.h) and hands the
// command to Run (commands.h).
#include <iostream>

#include "services/shortenctl/args.h"
#include "services/shortenctl/commands.h"
#include "services/shortenctl/ctl_flags.h"

int main(int argc, char** argv) {
  namespace ctl = shortener::ctl;
  absl::StatusOr<ctl::CommandLine> command_line = ctl::ParseArgv(argc, argv);
  if (!command_line.ok()) {
    return ctl::ReportUsageError(command_line.status().message(), ctl::UsageLine(""), std::cerr);
  }
  if (command_line->help) {
    std::cout << ctl::HelpText();
    return ctl::kExitOk;
  }
  ctl::Options options = ctl::OptionsFromFlags();
  options.flags_given = command_line->flags_given;
  return ctl::Run(options, command_line->positional, {std::cin, std::cout, std::cerr});
}
