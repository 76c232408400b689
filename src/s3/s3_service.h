// The S3 API: routes a request to an operation (path-style, or virtual-host style when a base
// domain is set), authenticates it, checks the principal's policies for the operation before any
// effect, runs it against the MetaStore and BlobStore, and writes the S3 XML response or error.
// Thread-safe: one instance serves all connections.
#pragma once

#include <memory>
#include <string>

#include "auth/sigv4.h"
#include "blob/blob_store.h"
#include "http/http.h"
#include "meta/meta_store.h"

namespace serac::auth {
class IdentityService;
struct Principal;
}  // namespace serac::auth

namespace serac::s3 {

struct S3Options {
  std::string domain;                // base domain for virtual-host style ("" = path style only)
  std::string region = "us-east-1";  // reported by GetBucketLocation / HeadBucket
};

class S3Service {
 public:
  // `identity` authenticates and authorises every request; it must outlive the service.
  S3Service(meta::MetaStore* meta, blob::BlobStore* blobs, const auth::IdentityService* identity,
            S3Options options);
  ~S3Service();
  S3Service(const S3Service&) = delete;
  S3Service& operator=(const S3Service&) = delete;

  void Handle(const http::Request& request, http::BodyReader& body, http::ResponseWriter& response,
              http::RequestOutcome& outcome);
  // The same request, acting as `principal`, which the caller has already proven (the web
  // console's session): no signature is looked for, and the body is read as an unsigned payload.
  // Authorisation is the principal's policies, as for a signed request. Path-style addressing.
  void HandleAs(const auth::Principal& principal, const http::Request& request, http::BodyReader& body,
                http::ResponseWriter& response, http::RequestOutcome& outcome);

 private:
  void Serve(const auth::Principal* proven, const http::Request& request, http::BodyReader& body,
             http::ResponseWriter& response, http::RequestOutcome& outcome);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// S3's <Error> document for an error the HTTP server answers by itself (server/router.cc chooses
// it for every path S3 serves).
http::ErrorDocument ServerErrorDocument(const http::ServerErrorInfo& error);

}  // namespace serac::s3
