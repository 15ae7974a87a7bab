// shortenctl's command-line flags, and the Options they make. Flags are
// defined here and nowhere else.
#ifndef SHORTENER_SERVICES_SHORTENCTL_CTL_FLAGS_H_
#define SHORTENER_SERVICES_SHORTENCTL_CTL_FLAGS_H_

#include "services/shortenctl/commands.h"

namespace shortener::ctl {

// The options the parsed flags (and $SHORTENER_API_KEY) describe.
Options OptionsFromFlags();

}  // namespace shortener::ctl

#endif  // SHORTENER_SERVICES_SHORTENCTL_CTL_FLAGS_H_
