// `serac server`: opens the stores under the data directory, sweeps what a crash left behind,
// serves S3 (and serac's own endpoints) until SIGTERM or SIGINT, then shuts down gracefully.
#pragma once

#include <string>

namespace serac::server {

struct ServerCommandOptions {
  std::string data_dir = "./data";
  std::string address = ":9000";
  std::string certs_dir;            // TLS when <certs_dir>/cert.pem and key.pem exist
  std::string domain;               // base domain for virtual-host style requests
  std::string region = "us-east-1";
  bool fsync = true;                // --no-fsync turns it off (benchmarks only)
};

// Returns the process exit code: 0 after a clean shutdown, 1 when start-up fails.
int RunServer(const ServerCommandOptions& options);

}  // namespace serac::server
