#include "meta/postgres/pg_test_cluster.h"

#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "meta/postgres/pg_connection_internal.h"

namespace serac::meta::testing {
namespace {

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

std::string PgBin() {
  const char* bin = std::getenv("SERAC_PG_BIN");
  return bin != nullptr ? bin : "/usr/lib/postgresql/15/bin";
}

// PostgreSQL refuses to run as root; Debian's package creates the `postgres` user for it.
std::string AsServerUser(const std::string& command) {
  return geteuid() == 0 ? "runuser -u postgres -- " + command : command;
}

class Cluster {
 public:
  Cluster() {
    if (const char* url = std::getenv("SERAC_TEST_POSTGRES_URL"); url != nullptr && *url != '\0') {
      url_ = url;
      return;
    }
    char pattern[] = "/tmp/serac-pg-test-XXXXXX";
    if (mkdtemp(pattern) == nullptr) {
      error_ = "mkdtemp failed";
      return;
    }
    directory_ = pattern;
    if (geteuid() == 0) {
      if (const passwd* account = getpwnam("postgres"); account != nullptr) {
        if (chown(directory_.c_str(), account->pw_uid, account->pw_gid) != 0) error_ = "chown failed";
      }
    }
    const int port = FreePort();
    const std::string data = directory_ + "/data";
    const std::string initdb =
        AsServerUser(PgBin() + "/initdb -D " + data + " -A trust -U postgres --no-sync -E UTF8 > " +
                     directory_ + "/initdb.log 2>&1");
    if (std::system(initdb.c_str()) != 0) {
      error_ =
          "initdb failed (is PostgreSQL 15 installed in " + PgBin() + "?); see " + directory_ + "/initdb.log";
      return;
    }
    const std::string options = "-c listen_addresses=127.0.0.1 -c unix_socket_directories=" + directory_ +
                                " -p " + std::to_string(port) + " -c fsync=off -c max_connections=300";
    const std::string start = AsServerUser(PgBin() + "/pg_ctl -D " + data + " -l " + directory_ +
                                           "/log -w -o '" + options + "' start > /dev/null 2>&1");
    if (std::system(start.c_str()) != 0) {
      error_ = "pg_ctl start failed; see " + directory_ + "/log";
      return;
    }
    started_ = true;
    url_ = "postgresql://postgres@127.0.0.1:" + std::to_string(port) + "/postgres";
  }

  ~Cluster() {
    if (!url_.empty()) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!schemas_.empty()) {
        if (auto db = postgres::PgConnection::Open(url_); db.ok()) {
          for (const auto& [key, schema] : schemas_)
            (void)(*db)->Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
      }
    }
    if (started_) {
      const std::string stop =
          AsServerUser(PgBin() + "/pg_ctl -D " + directory_ + "/data -m immediate stop > /dev/null 2>&1");
      (void)std::system(stop.c_str());
    }
    if (!directory_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(directory_, ignored);
    }
  }

  Result<std::string> Url(const std::string& key) {
    if (!error_.empty()) return Error(ErrorCode::kUnavailable, "test PostgreSQL: " + error_);
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = schemas_.find(key);
    if (found == schemas_.end()) {
      // Unique across the processes ctest runs at once against one server.
      const std::string schema =
          "serac_test_" + std::to_string(getpid()) + "_" + std::to_string(schemas_.size());
      SERAC_ASSIGN_OR_RETURN(auto db, postgres::PgConnection::Open(url_));
      SERAC_RETURN_IF_ERROR(
          (db->Exec("DROP SCHEMA IF EXISTS " + schema + " CASCADE; CREATE SCHEMA " + schema)).status());
      found = schemas_.emplace(key, schema).first;
    }
    const char* separator = url_.find('?') == std::string::npos ? "?" : "&";
    return url_ + separator + "options=-csearch_path%3D" + found->second;
  }

 private:
  std::string url_;
  std::string directory_;
  std::string error_;
  bool started_ = false;
  std::mutex mutex_;
  std::map<std::string, std::string> schemas_;  // guarded by mutex_
};

}  // namespace

Result<std::string> TestPostgresUrl(const std::string& key) {
  static Cluster cluster;
  return cluster.Url(key);
}

}  // namespace serac::meta::testing
