// The --address flag: "HOST:PORT", ":PORT" (all addresses) or "[IPv6]:PORT"; port 0 picks a free
// port. Also the host name to show users when the server listens on every address.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace serac::server {

struct ListenAddress {
  std::string host;  // "0.0.0.0" when the flag left it empty; IPv6 without brackets
  uint16_t port = 0;
};

// kInvalidArgument on a missing colon, an empty or non-numeric port, or a port above 65535.
Result<ListenAddress> ParseListenAddress(std::string_view text);

// True for the wildcard addresses that mean "every interface".
bool IsWildcardHost(std::string_view host);

// "http://127.0.0.1:9000" — loopback for wildcard hosts, brackets around IPv6 literals.
std::string EndpointUrl(std::string_view host, uint16_t port, bool tls);

}  // namespace serac::server
