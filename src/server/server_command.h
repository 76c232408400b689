// `serac server`: opens the stores under the data directory, sweeps what a crash left behind,
// serves S3 (and serac's own endpoints) until SIGTERM or SIGINT, then shuts down gracefully.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "common/limits.h"
#include "common/status.h"

namespace serac::server {

struct ServerCommandOptions {
  std::string data_dir = "./data";
  std::string address = ":9000";
  std::string certs_dir;  // TLS when <certs_dir>/cert.pem and key.pem exist
  std::string domain;     // base domain for virtual-host style requests
  std::string region = "us-east-1";
  bool fsync = true;  // --no-fsync turns it off (benchmarks only)
  // Where the index and the blobs live, as URLs (meta/open_meta_store.h, blob/open_blob_store.h);
  // empty: sqlite:DATA_DIR/meta.db and file:DATA_DIR/blobs.
  std::string meta_store_url;
  std::string blob_store_url;
  std::string server_key_file;  // --server-key-file; empty = SERAC_SERVER_KEY_FILE, else the default
  std::chrono::seconds token_ttl = limits::kBearerTokenTtlDefault;  // OAuth2 bearer tokens
  // Vended (session) credentials; --vended-credential-ttl or SERAC_VENDED_CREDENTIAL_TTL.
  std::chrono::seconds vended_credential_ttl = limits::kSessionCredentialsTtlDefault;
  int64_t maintenance_check_interval_seconds = 60;  // --maintenance-interval; 0: jobs only when asked
  // --connections-per-client-max; 0: no cap (behind a proxy every client has the proxy's address).
  uint32_t connections_per_client_max = limits::kConnectionsPerClientMax;
  // --node-name: which server of several answered (x-serac-node, serac_node_info); empty: not said
  // (nothing about the host is told to clients unless asked for).
  std::string node_name;
  bool console = true;  // --console on|off: the web console under /_serac/console
};

// kInvalidArgument naming the rule unless `name` is letters, digits, '.', '_' and '-', at most
// limits::kNodeNameBytesMax bytes (empty passes: no name).
Status CheckNodeName(const std::string& name);

// Registers the blob store back ends that live above blob/ (s3://, in client/) with
// blob::OpenBlobStore. Every command that opens a blob store by URL calls it first.
void RegisterUpstreamBlobStores();

// Holds an exclusive lock on DIR/serac.lock for as long as it lives (the kernel drops it when the
// process ends, however it ends). One server per data directory: a second one's caches would not
// see the first one's writes, and its start-up sweep would remove blobs the first is writing.
class DataDirectoryLock {
 public:
  // kAlreadyExists when another process (or another lock in this one) holds it.
  static Result<DataDirectoryLock> Acquire(const std::string& data_dir);
  DataDirectoryLock(DataDirectoryLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DataDirectoryLock& operator=(DataDirectoryLock&&) = delete;
  DataDirectoryLock(const DataDirectoryLock&) = delete;
  ~DataDirectoryLock();

 private:
  explicit DataDirectoryLock(int fd) : fd_(fd) {}
  int fd_;
};

// Ok when `ttl` lies within limits::kSessionCredentialsTtlMin..Max; kInvalidArgument naming the
// flag, the environment variable and the range otherwise (RunServer refuses to start).
Status CheckVendedCredentialTtl(std::chrono::seconds ttl);

// Where the server key file lives when SERAC_SERVER_KEY is not set: the flag, else
// SERAC_SERVER_KEY_FILE, else ${XDG_CONFIG_HOME:-$HOME/.config}/serac/server.key — outside the data
// directory on purpose. `environment` is getenv-like (nullptr when unset). kInvalidArgument when
// no location can be derived (no flag, no HOME).
Result<std::string> ServerKeyFilePath(const std::string& flag,
                                      const std::function<const char*(const char* name)>& environment);

// Returns the process exit code: 0 after a clean shutdown, 1 when start-up fails.
int RunServer(const ServerCommandOptions& options);

}  // namespace serac::server
