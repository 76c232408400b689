// The root credentials: the one identity that exists before any user is created. They come from
// SERAC_ROOT_USER / SERAC_ROOT_PASSWORD, else from <data>/root-credentials, else they are generated
// on first start and written to that file (mode 0600, atomically). The secret is shown to the
// operator once, when generated; it never goes to the log.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "auth/sigv4.h"
#include "common/status.h"

namespace serac::server {

inline constexpr std::string_view kRootCredentialsFileName = "root-credentials";

enum class CredentialSource {
  kEnvironment,  // SERAC_ROOT_USER / SERAC_ROOT_PASSWORD
  kFile,         // read from an existing <data>/root-credentials
  kGenerated,    // created now and written to <data>/root-credentials
};

struct RootCredentials {
  auth::Credentials credentials;
  CredentialSource source = CredentialSource::kGenerated;
  std::string file_path;  // <data>/root-credentials (also for kEnvironment, where it is unused)
};

// `env_user` / `env_password` are the environment values (nullopt or empty = unset). Both or
// neither must be set. kInvalidArgument on a half-set pair, bad lengths, or a malformed file;
// kIoError when the file cannot be read or written.
Result<RootCredentials> LoadRootCredentials(const std::string& data_dir,
                                            const std::optional<std::string>& env_user,
                                            const std::optional<std::string>& env_password);

// Checks an access key / secret pair against the limits (printable ASCII, no '/' in the key).
Status ValidateRootCredentials(std::string_view access_key, std::string_view secret_key);

// Serialised file contents: "access_key=...\nsecret_key=...\n".
std::string FormatCredentialsFile(const auth::Credentials& credentials);
Result<auth::Credentials> ParseCredentialsFile(std::string_view contents);

// A fresh access key (upper-case letters and digits) and secret (letters and digits).
auth::Credentials GenerateRootCredentials();

}  // namespace serac::server
