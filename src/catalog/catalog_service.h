// The Iceberg REST catalog served under /_iceberg on the S3 port: configuration, namespaces,
// tables (create, stage-create, load, commit, drop, purge, rename, register, metrics), views,
// multi-table transactions and the warehouse admin API. Every request is authenticated with
// SigV4 (signing name "s3tables" or "s3", generic URI encoding). Table and view metadata files are
// written as objects in the warehouse bucket; the current file of each table is swapped by
// compare-and-swap in the MetaStore's CatalogStore.
// Thread-safe: one instance serves all connections.
#pragma once

#include <memory>
#include <string>

#include "auth/sigv4.h"
#include "blob/blob_store.h"
#include "http/http.h"
#include "meta/meta_store.h"

namespace serac::catalog {

struct CatalogOptions {
  std::string region = "us-east-1";  // advertised as client.region / s3.region
  // S3 endpoint advertised to clients ("http://host:9000"); empty = scheme://Host of each request.
  std::string s3_endpoint;
  // Warehouse used by requests without a {prefix} segment; empty = the only warehouse, if one.
  std::string default_warehouse;
};

class CatalogService {
 public:
  CatalogService(meta::MetaStore* meta, blob::BlobStore* blobs, auth::CredentialLookup credentials,
                 CatalogOptions options);
  ~CatalogService();
  CatalogService(const CatalogService&) = delete;
  CatalogService& operator=(const CatalogService&) = delete;

  // Serves a request whose path starts with "/_iceberg".
  void Handle(const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
              http::RequestOutcome& outcome);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace serac::catalog
