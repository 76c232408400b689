// The Iceberg REST catalog served under /_iceberg on the S3 port: configuration, namespaces,
// tables (create, stage-create, load, commit, drop, purge, rename, register, metrics), views,
// multi-table transactions, vended credentials and the warehouse admin API.
//
// Every request but the OAuth2 token endpoint (POST /_iceberg/v1/oauth/tokens) is authenticated,
// with SigV4 (signing name "s3tables" or "s3", generic URI encoding) or an OAuth2 bearer token
// that endpoint issued, and then authorised by the IdentityService with the s3tables:* action of
// its route (catalog_service.cc's route table maps every route to one) before it has any effect.
// Table and view metadata files are written as objects in the warehouse bucket; the current file
// of each table is swapped by compare-and-swap in the MetaStore's CatalogStore.
// Thread-safe: one instance serves all connections.
#pragma once

#include <memory>
#include <string>

#include "blob/blob_store.h"
#include "http/http.h"
#include "meta/meta_store.h"

namespace serac::auth {
class IdentityService;
struct Principal;
}  // namespace serac::auth
namespace serac::iceberg {
class TableCatalog;
}

namespace serac::catalog {

struct CatalogOptions {
  std::string region = "us-east-1";  // advertised as client.region / s3.region
  // S3 endpoint advertised to clients ("http://host:9000"); empty = scheme://Host of each request.
  std::string s3_endpoint;
  // Warehouse used by requests without a {prefix} segment; empty = the only warehouse, if one.
  std::string default_warehouse;
  // How long after a commit a table is looked at for automatic maintenance (and at most how often);
  // 0: maintenance jobs run only when asked (catalog/job_runner.h).
  int64_t maintenance_check_interval_ms = 60'000;
  // Non-empty when other servers share the catalog: this server's name among them. A table's
  // maintenance jobs then run where its lease is held (catalog/job_lease_owner.h).
  std::string lease_holder;
};

class CatalogService {
 public:
  // `identity` authenticates and authorises every request; it must outlive the service.
  CatalogService(meta::MetaStore* meta, blob::BlobStore* blobs, const auth::IdentityService* identity,
                 CatalogOptions options);
  ~CatalogService();
  CatalogService(const CatalogService&) = delete;
  CatalogService& operator=(const CatalogService&) = delete;

  // Serves a request whose path starts with "/_iceberg".
  void Handle(const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
              http::RequestOutcome& outcome);
  // The same request, acting as `principal`, which the caller has already proven (the web
  // console's session): no signature or token is looked for; authorisation is the principal's.
  void HandleAs(const auth::Principal& principal, const http::Request& request, http::BodyReader& body,
                http::ResponseWriter& response, http::RequestOutcome& outcome);

  // The tables of `warehouse` for the server's own writers (table maintenance): loads, and commits
  // on the REST routes' commit path with the same requirements, retries and caches, as the server
  // itself, without a principal. Files go through catalog/in_process_tables.h's MakeObjectFileIO.
  // Must not outlive the service.
  std::unique_ptr<iceberg::TableCatalog> InProcessTables(std::string warehouse);
  // Prometheus text of the table maintenance jobs run so far (catalog/job_runner.h).
  std::string RenderMetrics() const;

 private:
  void Serve(const auth::Principal* proven, const http::Request& request, http::BodyReader& body,
             http::ResponseWriter& response, http::RequestOutcome& outcome);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The catalog's error document for an error the HTTP server answers by itself (server/router.cc
// chooses it under /_iceberg and /_serac): an IcebergErrorResponse, or RFC 6749's error shape on
// the OAuth2 token endpoint, which OAuth2 clients parse.
http::ErrorDocument ServerErrorDocument(const http::ServerErrorInfo& error);

}  // namespace serac::catalog
