#include "server/server_command.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "admin/admin_api.h"
#include "auth/identity.h"
#include "auth/server_key.h"
#include "blob/open_blob_store.h"
#include "catalog/catalog_service.h"
#include "client/s3_blob_store.h"
#include "common/file_io.h"
#include "common/log.h"
#include "common/random.h"
#include "common/version.h"
#include "console/console_service.h"
#include "http/metrics.h"
#include "http/server.h"
#include "meta/open_meta_store.h"
#include "objects/gc.h"
#include "s3/s3_service.h"
#include "server/listen_address.h"
#include "server/root_credentials.h"
#include "server/router.h"
#include "server/startup_banner.h"

namespace serac::server {

Status CheckNodeName(const std::string& name) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  };
  if (name.size() > limits::kNodeNameBytesMax || !std::all_of(name.begin(), name.end(), allowed)) {
    return Error(ErrorCode::kInvalidArgument,
                 "--node-name must be letters, digits, '.', '_' and '-', at most " +
                     std::to_string(limits::kNodeNameBytesMax) + " bytes (limits::kNodeNameBytesMax)");
  }
  return Status::Ok();
}

namespace {

// SIGUSR1 only wakes the signal thread when the server stopped on its own.
constexpr int kWakeSignal = SIGUSR1;

sigset_t WatchedSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, kWakeSignal);
  return set;
}

// Must run before any thread starts so every thread inherits the mask and only sigwait sees them.
void BlockWatchedSignals() {
  sigset_t set = WatchedSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a vanished client must not kill the process
}

std::optional<std::string> Environment(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

Status PrepareDataDirectory(const std::string& dir) {
  std::error_code error;
  bool created = std::filesystem::create_directories(dir, error);
  if (error)
    return Error(ErrorCode::kIoError, "cannot create data directory " + dir + ": " + error.message());
  if (created && ::chmod(dir.c_str(), 0700) != 0) {
    return Error(ErrorCode::kIoError, "cannot chmod data directory " + dir + ": " + std::strerror(errno));
  }
  if (!std::filesystem::is_directory(dir, error)) {
    return Error(ErrorCode::kInvalidArgument, "data path " + dir + " is not a directory");
  }
  return Status::Ok();
}

// Fills the TLS files when --certs-dir holds cert.pem and key.pem.
Status ConfigureTls(const std::string& certs_dir, http::ServerOptions& options) {
  if (certs_dir.empty()) return Status::Ok();
  const std::string cert = certs_dir + "/cert.pem";
  const std::string key = certs_dir + "/key.pem";
  bool has_cert = ::access(cert.c_str(), R_OK) == 0;
  bool has_key = ::access(key.c_str(), R_OK) == 0;
  if (has_cert != has_key) {
    return Error(ErrorCode::kInvalidArgument,
                 "--certs-dir " + certs_dir + " must hold both cert.pem and key.pem (found only one)");
  }
  if (!has_cert) {
    log::Warn("--certs-dir " + certs_dir + " holds no cert.pem/key.pem; serving plain HTTP");
    return Status::Ok();
  }
  options.tls_cert_file = cert;
  options.tls_key_file = key;
  return Status::Ok();
}

// Loopback first, then the machine's other IPv4 addresses when listening on all of them.
std::vector<std::string> EndpointUrls(const std::string& host, uint16_t port, bool tls) {
  std::vector<std::string> urls = {EndpointUrl(host, port, tls)};
  if (!IsWildcardHost(host)) return urls;
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return urls;
  for (ifaddrs* it = interfaces; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* address = reinterpret_cast<const sockaddr_in*>(it->ifa_addr);
    if (::inet_ntop(AF_INET, &address->sin_addr, text, sizeof text) == nullptr) continue;
    std::string url = EndpointUrl(text, port, tls);
    if (url != urls.front()) urls.push_back(url);
  }
  ::freeifaddrs(interfaces);
  return urls;
}

}  // namespace

Result<DataDirectoryLock> DataDirectoryLock::Acquire(const std::string& data_dir) {
  const std::string path = data_dir + "/serac.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return file_io::ErrnoError("cannot open", path);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return Error(
          ErrorCode::kAlreadyExists,
          "data directory " + data_dir + " is in use by another serac server (" + path + " is locked)");
    }
    errno = error;
    return file_io::ErrnoError("cannot lock", path);
  }
  return DataDirectoryLock(fd);
}

DataDirectoryLock::~DataDirectoryLock() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

struct Stores {
  std::unique_ptr<meta::MetaStore> meta;
  std::unique_ptr<blob::BlobStore> blobs;
  // Other servers share the metadata store, and so the blob store its rows name.
  bool shared = false;
};

}  // namespace

void RegisterUpstreamBlobStores() {
  // The upstream-S3 back end lives in client/ (it needs the S3 client and SigV4): named here, where
  // the server's stores are composed, so that blob/ never includes what is above it.
  blob::RegisterBlobStoreScheme("s3://", [](std::string_view url, const blob::BlobStoreOpenOptions&) {
    return client::OpenS3BlobStoreUrl(url);
  });
}

namespace {

Result<Stores> OpenStores(const ServerCommandOptions& options) {
  Stores stores;
  const std::string meta_url =
      options.meta_store_url.empty() ? meta::DefaultMetaStoreUrl(options.data_dir) : options.meta_store_url;
  SERAC_ASSIGN_OR_RETURN(stores.meta, meta::OpenMetaStore(meta_url, {.fsync = options.fsync}));
  stores.shared = meta::IsSharedMetaStoreUrl(meta_url);
  const std::string blob_url =
      options.blob_store_url.empty() ? blob::DefaultBlobStoreUrl(options.data_dir) : options.blob_store_url;
  RegisterUpstreamBlobStores();
  SERAC_ASSIGN_OR_RETURN(stores.blobs, blob::OpenBlobStore(blob_url, {.fsync = options.fsync}));
  return stores;
}

// Unique among the servers sharing a store, and readable in the leases table: the node's name
// (or the host's), the process id and a random part, since a restarted server must not renew the
// leases its predecessor held while their work may be half done.
std::string LeaseHolderName(const std::string& node_name) {
  std::string name = node_name;
  if (name.empty()) {
    std::array<char, 256> host{};
    name = ::gethostname(host.data(), host.size() - 1) == 0 ? std::string(host.data()) : "serac";
  }
  return name + "/" + std::to_string(::getpid()) + "/" + RandomHexId(4);
}

Status Sweep(Stores& stores) {
  // With the embedded back ends this process holds the data directory's lock, and they live under
  // it; a shared metadata store has other writers, whose fresh blobs must be spared.
  objects::SweepOptions options;
  options.exclusive = !stores.shared;
  SERAC_ASSIGN_OR_RETURN(objects::SweepReport report,
                         objects::SweepAtStartup(*stores.meta, *stores.blobs, options));
  log::Info("start-up sweep: removed " + std::to_string(report.orphan_blobs_removed) +
            " orphaned blobs and " + std::to_string(report.garbage_blobs_removed) + " queued garbage blobs");
  return Status::Ok();
}

struct LoadedServerKey {
  auth::ServerKey key;
  std::string source;  // the file's absolute path, or the environment variable's name
};

std::filesystem::path AbsolutePath(const std::string& path) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return (error ? std::filesystem::path(path) : absolute).lexically_normal();
}

bool IsInside(const std::filesystem::path& path, const std::filesystem::path& dir) {
  std::filesystem::path relative = path.lexically_relative(dir);
  return !relative.empty() && *relative.begin() != "..";
}

// SERAC_SERVER_KEY (base64) wins; else the key file, created on first start. The key itself is
// never printed or logged, only where it came from and its fingerprint.
Result<LoadedServerKey> LoadServerKey(const ServerCommandOptions& options) {
  if (std::optional<std::string> value = Environment("SERAC_SERVER_KEY"); value && !value->empty()) {
    SERAC_ASSIGN_OR_RETURN(auth::ServerKey key, auth::ServerKey::FromEnvironmentValue(*value));
    return LoadedServerKey{std::move(key), "SERAC_SERVER_KEY"};
  }
  SERAC_ASSIGN_OR_RETURN(std::string path, ServerKeyFilePath(options.server_key_file, std::getenv));
  std::filesystem::path absolute = AbsolutePath(path);
  if (IsInside(absolute, AbsolutePath(options.data_dir))) {
    log::Warn("the server key file " + absolute.string() +
              " is inside the data directory: a copy of the "
              "data directory then reveals every user's secret; keep it elsewhere (--server-key-file)");
  }
  Result<auth::ServerKey> key = auth::ServerKey::LoadOrCreate(absolute.string());
  if (!key.ok()) {
    return Error(key.status().code(), "server key file " + absolute.string() + ": " + key.status().message());
  }
  return LoadedServerKey{std::move(key).value(), absolute.string()};
}

// Waits for SIGTERM/SIGINT and starts a graceful shutdown; a second one exits at once.
class SignalWatcher {
 public:
  explicit SignalWatcher(http::Server* server) : server_(server), thread_([this] { Run(); }) {}
  ~SignalWatcher() { Stop(); }

  void Stop() {
    if (!thread_.joinable()) return;
    finished_.store(true);
    pthread_kill(thread_.native_handle(), kWakeSignal);
    thread_.join();
    if (shutdown_thread_.joinable()) shutdown_thread_.join();
  }

 private:
  void Run() {
    sigset_t set = WatchedSignals();
    bool shutting_down = false;
    while (true) {
      int signal_number = 0;
      if (sigwait(&set, &signal_number) != 0) continue;
      if (signal_number == kWakeSignal) {
        if (finished_.load()) return;
        continue;
      }
      if (shutting_down) {
        log::Warn("second signal: exiting without waiting for in-flight requests");
        std::_Exit(1);
      }
      shutting_down = true;
      log::Info(std::string("received ") + strsignal(signal_number) + ": shutting down");
      // Shutdown may wait for in-flight requests; keep listening for a second signal meanwhile.
      shutdown_thread_ = std::thread([this] { server_->Shutdown(); });
    }
  }

  http::Server* server_;
  std::atomic<bool> finished_{false};
  std::thread shutdown_thread_;
  std::thread thread_;
};

void PrintBanner(const ServerCommandOptions& options, const RootCredentials& root,
                 const LoadedServerKey& server_key, const http::ServerOptions& server_options,
                 uint16_t port) {
  BannerInput banner;
  banner.server_key_source = server_key.source;
  banner.server_key_fingerprint = server_key.key.Fingerprint();
  bool tls = !server_options.tls_cert_file.empty();
  banner.endpoints = EndpointUrls(server_options.address, port, tls);
  banner.region = options.region;
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(options.data_dir, error);
  banner.data_dir = error ? options.data_dir : absolute.lexically_normal().string();
  banner.root = root;
  if (!error) {  // so the pasted commands work from any directory
    banner.root.file_path = (absolute / std::string(kRootCredentialsFileName)).lexically_normal().string();
  }
  banner.fsync = options.fsync;
  banner.console = options.console;
  std::string text = FormatStartupBanner(banner);
  std::string shown_host = server_options.address.find(':') != std::string::npos
                               ? "[" + server_options.address + "]"
                               : server_options.address;
  text += "serac: listening on " + shown_host + ":" + std::to_string(port) + "\n";
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

int Fail(const Status& status) {
  std::fprintf(stderr, "serac: cannot start: %s\n", status.message().c_str());
  return 1;
}

}  // namespace

Status CheckVendedCredentialTtl(std::chrono::seconds ttl) {
  const auto min = std::chrono::seconds(limits::kSessionCredentialsTtlMin);
  const auto max = std::chrono::seconds(limits::kSessionCredentialsTtlMax);
  if (ttl >= min && ttl <= max) return Status::Ok();
  return Error(ErrorCode::kInvalidArgument,
               "--vended-credential-ttl (SERAC_VENDED_CREDENTIAL_TTL) must be between " +
                   std::to_string(min.count()) + " and " + std::to_string(max.count()) + " seconds, not " +
                   std::to_string(ttl.count()));
}

Result<std::string> ServerKeyFilePath(const std::string& flag,
                                      const std::function<const char*(const char* name)>& environment) {
  if (!flag.empty()) return flag;
  auto non_empty = [&environment](const char* name) -> std::optional<std::string> {
    const char* value = environment(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
  };
  if (std::optional<std::string> file = non_empty("SERAC_SERVER_KEY_FILE")) return *file;
  if (std::optional<std::string> config = non_empty("XDG_CONFIG_HOME")) return *config + "/serac/server.key";
  if (std::optional<std::string> home = non_empty("HOME")) return *home + "/.config/serac/server.key";
  return Error(
      ErrorCode::kInvalidArgument,
      "cannot place the server key file: HOME is not set; give --server-key-file or SERAC_SERVER_KEY");
}

int RunServer(const ServerCommandOptions& options) {
  if (Status ttl = CheckVendedCredentialTtl(options.vended_credential_ttl); !ttl.ok()) return Fail(ttl);
  BlockWatchedSignals();
  if (!options.fsync) {
    log::Warn(
        "*** --no-fsync: writes are acknowledged before they reach stable storage; a crash or "
        "power loss can lose or corrupt data. Use for benchmarks only. ***");
  }
  Result<ListenAddress> address = ParseListenAddress(options.address);
  if (!address.ok()) return Fail(address.status());
  http::ServerOptions server_options;
  server_options.error_renderer = ServerErrorDocument;
  server_options.request_id_header = "x-amz-request-id";  // what S3 clients log and quote to support
  server_options.connections_per_client_max = options.connections_per_client_max;
  server_options.address = address->host;
  server_options.port = address->port;
  if (Status tls = ConfigureTls(options.certs_dir, server_options); !tls.ok()) return Fail(tls);
  if (Status dir = PrepareDataDirectory(options.data_dir); !dir.ok()) return Fail(dir);
  Result<DataDirectoryLock> data_lock = DataDirectoryLock::Acquire(options.data_dir);
  if (!data_lock.ok()) return Fail(data_lock.status());

  Result<RootCredentials> root = LoadRootCredentials(options.data_dir, Environment("SERAC_ROOT_USER"),
                                                     Environment("SERAC_ROOT_PASSWORD"));
  if (!root.ok()) return Fail(root.status());
  Result<Stores> stores = OpenStores(options);
  if (!stores.ok()) return Fail(stores.status());
  if (Status swept = Sweep(*stores); !swept.ok()) return Fail(swept);

  Result<LoadedServerKey> server_key = LoadServerKey(options);
  if (!server_key.ok()) return Fail(server_key.status());
  log::Info("server key from " + server_key->source + " (fingerprint " + server_key->key.Fingerprint() + ")");
  auth::IdentityOptions identity_options;
  identity_options.bearer_token_ttl = options.token_ttl;
  identity_options.session_ttl = options.vended_credential_ttl;
  auth::IdentityService identity(root->credentials, server_key->key, &stores->meta->iam(), identity_options);
  if (Status initialized = identity.Initialize(); !initialized.ok()) return Fail(initialized);

  s3::S3Options s3_options;
  s3_options.domain = options.domain;
  s3_options.region = options.region;
  s3::S3Service s3(stores->meta.get(), stores->blobs.get(), &identity, s3_options);
  catalog::CatalogOptions catalog_options;
  catalog_options.region = options.region;
  catalog_options.maintenance_check_interval_ms = options.maintenance_check_interval_seconds * 1000;
  // With a shared metadata store, background work runs under leases held in this server's name.
  const std::string lease_holder = stores->shared ? LeaseHolderName(options.node_name) : std::string();
  catalog_options.lease_holder = lease_holder;
  catalog::CatalogService catalog(stores->meta.get(), stores->blobs.get(), &identity, catalog_options);
  admin::AdminApi admin(&identity);
  http::Metrics metrics;
  RouterOptions router_options;
  router_options.domain = options.domain;
  router_options.admin = [&admin](const http::Request& request, http::BodyReader& body,
                                  http::ResponseWriter& response, http::RequestOutcome& outcome) {
    admin.Handle(request, body, response, outcome);
  };
  router_options.iceberg = [&catalog](const http::Request& request, http::BodyReader& body,
                                      http::ResponseWriter& response, http::RequestOutcome& outcome) {
    catalog.Handle(request, body, response, outcome);
  };
  objects::GarbageCollector gc(stores->meta.get(), stores->blobs.get(), lease_holder);
  router_options.more_metrics = [&catalog, &stores, &gc] {
    return catalog.RenderMetrics() + stores->meta->RenderMetrics() + gc.RenderMetrics();
  };
  console::ConsoleOptions console_options;
  console_options.version = std::string(kSeracVersion);
  console_options.node_name = options.node_name;
  console_options.region = options.region;
  console_options.render_metrics = [&metrics, more = router_options.more_metrics] {
    return metrics.Render() + more();
  };
  console::ConsoleService console_service(
      console::ConsoleServices{stores->meta.get(), &identity, &s3, &catalog, &admin},
      std::move(console_options));
  if (options.console) {
    router_options.console = [&console_service](const http::Request& request, http::BodyReader& body,
                                                http::ResponseWriter& response,
                                                http::RequestOutcome& outcome) {
      console_service.Handle(request, body, response, outcome);
    };
  }
  router_options.blobs_reachable = [&stores] { return stores->blobs->CheckReachable(); };
  if (Status named = CheckNodeName(options.node_name); !named.ok()) return Fail(named);
  router_options.node_name = options.node_name;
  Router router(
      stores->meta.get(), &metrics,
      [&s3](const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
            http::RequestOutcome& outcome) { s3.Handle(request, body, response, outcome); },
      std::move(router_options));
  http::Server server(
      server_options,
      [&router](const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
                http::RequestOutcome& outcome) { router.Handle(request, body, response, outcome); },
      &metrics);
  if (Status started = server.Start(); !started.ok()) return Fail(started);

  gc.Start();
  SignalWatcher signals(&server);
  PrintBanner(options, *root, *server_key, server_options, server.port());
  log::Info("serving on port " + std::to_string(server.port()) + " as root access key " +
            root->credentials.access_key);

  server.Wait();
  signals.Stop();
  gc.Stop();
  log::Info("shut down cleanly");
  return 0;
}

}  // namespace serac::server
