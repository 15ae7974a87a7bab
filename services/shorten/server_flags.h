// shorten-service's command-line flags, and the ServerConfig they make.
// Flags are defined here and nowhere else: the library takes a ServerConfig.
#ifndef SHORTENER_SERVICES_SHORTEN_SERVER_FLAGS_H_
#define SHORTENER_SERVICES_SHORTEN_SERVER_FLAGS_H_

#include "services/shorten/server_config.h"

namespace shortener::service {

// The config the parsed flags describe (RunServer validates it).
ServerConfig ServerConfigFromFlags();

}  // namespace shortener::service

#endif  // SHORTENER_SERVICES_SHORTEN_SERVER_FLAGS_H_
