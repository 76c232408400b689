// An Iceberg REST catalog client for serac and for any catalog that speaks the protocol: the config
// handshake (the warehouse's prefix and defaults), namespaces, loading, creating and dropping
// tables, and commits — one table's requirements and updates, or several tables in one
// transaction. Requests are signed with SigV4 (signing name s3tables by default, as serac and AWS
// S3 Tables verify), or carry an OAuth2 bearer token (fetched with the client-credentials grant and
// renewed before it expires), or nothing.
//
// JSON goes in and out as text (schemas, specs, requirements, updates, metadata), so this header
// stays light; the caller builds it with whatever it likes (the iceberg module's model).
// Thread-safe: every method may be called concurrently.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace serac::client {

struct RestCatalogOptions {
  // The catalog's base URI: serac's is http://HOST:PORT/_iceberg; others' e.g. http://HOST:8181.
  std::string uri = "http://127.0.0.1:9000/_iceberg";
  std::string warehouse;  // sent to GET /v1/config; empty = the catalog's default

  enum class Auth {
    kSigV4,   // access_key/secret_key (and session_token) sign every request
    kOAuth2,  // access_key/secret_key are the OAuth2 client id and secret (client-credentials grant)
    kBearer,  // bearer_token as given
    kNone,
  } auth = Auth::kSigV4;
  std::string access_key;
  std::string secret_key;  // never logged or printed
  std::string session_token;
  std::string region = "us-east-1";
  std::string signing_name = "s3tables";
  std::string bearer_token;
  std::string oauth2_server_uri;  // empty: URI + "/v1/oauth/tokens"
  std::string oauth2_scope = "catalog";

  std::string ca_file;    // trusted CAs for https (PEM); empty = the system store
  bool insecure = false;  // skip certificate verification (self-signed test servers only)
};

using NamespaceLevels = std::vector<std::string>;

struct TableIdentifier {
  NamespaceLevels levels;
  std::string name;
};

// A table as the catalog answered LoadTable, CreateTable or a commit.
struct LoadedTable {
  std::string metadata_location;
  std::string metadata_json;  // the "metadata" object, as text
  // "config" of the answer: per-table settings such as vended S3 credentials (s3.access-key-id,
  // s3.secret-access-key, s3.session-token) and the S3 endpoint.
  std::map<std::string, std::string> config;
};

struct TableCreation {
  std::string name;
  std::string schema_json;          // an Iceberg schema object
  std::string partition_spec_json;  // empty: unpartitioned
  std::string sort_order_json;      // empty: unsorted
  std::string location;             // empty: the catalog chooses
  std::map<std::string, std::string> properties;
  bool stage_create = false;  // create nothing yet; a commit with assert-create makes it
};

struct TableCommit {
  TableIdentifier table;
  std::string requirements_json = "[]";  // array of requirement objects
  std::string updates_json = "[]";       // array of update objects
};

class RestCatalog {
 public:
  // Runs the config handshake. kInvalidArgument for a bad URI or missing credentials; the catalog's
  // own error (kAccessDenied, kNotFound for an unknown warehouse, ...) with its message.
  static Result<std::unique_ptr<RestCatalog>> Connect(RestCatalogOptions options);

  // Errors carry the catalog's message and type ("... (NoSuchTableException)"): kNotFound,
  // kAlreadyExists (409 on a create), kConflict (409 CommitFailedException: a requirement failed;
  // reload and retry), kOutcomeUnknown (a commit answered 500/502/504 or lost its answer: it may
  // have landed; load the table to see), kAccessDenied, kInvalidArgument.
  Status CreateNamespace(const NamespaceLevels& levels,
                         const std::map<std::string, std::string>& properties = {});
  Result<bool> NamespaceExists(const NamespaceLevels& levels);
  Result<std::vector<std::string>> ListTables(const NamespaceLevels& levels);
  Result<LoadedTable> LoadTable(const TableIdentifier& table);
  Result<LoadedTable> CreateTable(const NamespaceLevels& levels, const TableCreation& request);
  Result<LoadedTable> CommitTable(const TableCommit& commit);
  // All or nothing across tables (POST /v1/{prefix}/transactions/commit).
  Status CommitTransaction(const std::vector<TableCommit>& commits);
  Status DropTable(const TableIdentifier& table, bool purge);

  // The handshake's defaults with its overrides applied.
  const std::map<std::string, std::string>& config() const { return config_; }
  // Whether the catalog serves `endpoint` ("POST /v1/{prefix}/transactions/commit"): named in the
  // handshake's "endpoints" list, or, when it sent none, among the spec's default routes (Java's
  // set: the namespace and table routes, metrics, rename, register and transactions/commit).
  bool Advertises(const std::string& endpoint) const;
  // "/v1/" or "/v1/{prefix}/": what every later path starts with.
  const std::string& path_base() const { return path_base_; }

 private:
  explicit RestCatalog(RestCatalogOptions options) : options_(std::move(options)) {}
  struct Reply {
    int status = 0;
    std::string body;
  };
  // Sends and returns any HTTP answer; errors only for transport failures (kOutcomeUnknown when the
  // request went out on a write).
  Result<Reply> Send(std::string_view method, const std::string& path, const std::string& query,
                     const std::string& body, bool is_write);
  // A non-2xx answer as a Status: the code from the status and the error type, the catalog's message.
  static Status ErrorFrom(const Reply& reply, bool is_commit);
  Result<std::string> BearerToken();

  RestCatalogOptions options_;
  std::map<std::string, std::string> config_;
  std::string path_base_ = "/v1/";
  std::optional<std::set<std::string>> endpoints_;  // the handshake's list; nullopt: none sent

  std::mutex token_mutex_;
  std::string token_;                                     // guarded by token_mutex_
  std::chrono::steady_clock::time_point token_renew_at_;  // guarded by token_mutex_
};

}  // namespace serac::client
