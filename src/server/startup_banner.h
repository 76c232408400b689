// What `serac server` prints to stdout once it listens: endpoints, the root access key and a
// ready-to-paste AWS CLI configuration. The secret appears only when it was generated just now
// (the one chance to see it); otherwise the configuration reads it from its source.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "server/root_credentials.h"

namespace serac::server {

struct BannerInput {
  std::vector<std::string> endpoints;  // endpoints[0] is used in the example commands
  std::string region;
  std::string data_dir;  // absolute
  RootCredentials root;
  bool fsync = true;
  std::string server_key_source;       // the key file's path, or "SERAC_SERVER_KEY"; never the key
  std::string server_key_fingerprint;  // ServerKey::Fingerprint()
  bool console = false;                // the web console is served (its URL is printed)
};

std::string FormatStartupBanner(const BannerInput& input);

// Quotes `text` for POSIX shells when it contains anything but [A-Za-z0-9_./:-].
std::string ShellQuote(std::string_view text);

}  // namespace serac::server
