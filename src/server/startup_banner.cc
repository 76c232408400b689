#include "server/startup_banner.h"

namespace serac::server {

namespace {

bool IsShellSafe(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '/' || c == ':' || c == '-';
}

// The shell expression that yields the secret without the banner containing it.
std::string SecretExpression(const RootCredentials& root) {
  switch (root.source) {
    case CredentialSource::kEnvironment:
      return "\"$SERAC_ROOT_PASSWORD\"";
    case CredentialSource::kFile:
      return "\"$(sed -n 's/^secret_key=//p' " + ShellQuote(root.file_path) + ")\"";
    case CredentialSource::kGenerated:
      return ShellQuote(root.credentials.secret_key);
  }
  return "";
}

std::string SecretNotice(const RootCredentials& root) {
  switch (root.source) {
    case CredentialSource::kEnvironment:
      return "  Secret key:  from SERAC_ROOT_PASSWORD\n";
    case CredentialSource::kFile:
      return "  Secret key:  stored in " + root.file_path + "\n";
    case CredentialSource::kGenerated:
      return "  Secret key:  " + root.credentials.secret_key +
             "\n               (generated now and stored in " + root.file_path +
             "; it will not be shown again)\n";
  }
  return "";
}

}  // namespace

std::string ShellQuote(std::string_view text) {
  bool safe = !text.empty();
  for (char c : text) safe = safe && IsShellSafe(c);
  if (safe) return std::string(text);
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted.push_back(c);
    }
  }
  quoted.push_back('\'');
  return quoted;
}

std::string FormatStartupBanner(const BannerInput& input) {
  std::string out = "serac: S3-compatible object store\n";
  for (const std::string& endpoint : input.endpoints) out += "  Endpoint:    " + endpoint + "\n";
  out += "  Region:      " + input.region + "\n";
  out += "  Data:        " + input.data_dir + "\n";
  out += "  Access key:  " + input.root.credentials.access_key + "\n";
  out += SecretNotice(input.root);
  if (!input.server_key_source.empty()) {
    out += "  Server key:  " + input.server_key_source;
    if (!input.server_key_fingerprint.empty()) out += " (fingerprint " + input.server_key_fingerprint + ")";
    out += "\n";
  }
  if (!input.fsync) out += "  WARNING:     --no-fsync: acknowledged writes can be lost on power failure\n";
  const std::string endpoint = input.endpoints.empty() ? std::string() : input.endpoints.front();
  out += "  Catalog:     " + endpoint + "/_iceberg (Iceberg REST: SigV4 as s3tables, or OAuth2)\n";
  if (input.console) out += "  Console:     " + endpoint + "/_serac/console/ (sign in with an access key)\n";
  // The serac CLI reads the AWS variables too, so these lines serve the AWS CLI, SDKs and serac.
  out += "\nAWS CLI, SDKs and the serac CLI:\n";
  out += "  export AWS_ACCESS_KEY_ID=" + ShellQuote(input.root.credentials.access_key) +
         " AWS_SECRET_ACCESS_KEY=" + SecretExpression(input.root) +
         " AWS_DEFAULT_REGION=" + ShellQuote(input.region) + " AWS_ENDPOINT_URL=" + ShellQuote(endpoint) +
         "\n";
  out += "  aws --endpoint-url " + endpoint + " s3 ls\n";
  out += "\nIceberg tables:\n";
  out += "  serac warehouse create my-warehouse\n";
  out +=
      "  serac config --engine spark --warehouse my-warehouse    (or pyiceberg, trino, duckdb, clickhouse)\n";
  return out;
}

}  // namespace serac::server
