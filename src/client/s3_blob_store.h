// A blob::BlobStore in a bucket of an upstream S3 service (AWS S3, Ceph RGW, MinIO, another serac),
// so that several serac nodes share their bytes without a shared file system. Each blob is the
// object PREFIX<id>: written once, with If-None-Match: * (never over another), as one PUT or a
// multipart upload with several parts in flight; visible only when its upload completes; read by
// ranged GETs; listed by prefix. Reads, listings, HEADs and deletes are retried with backoff on the
// errors that say "try again" (limits::kS3BlobStoreAttemptsMax).
//
// It needs the S3 client and SigV4 signing, which sit above blob/ in the module order, so it lives
// here and the composition root (server/server_command.cc) registers its scheme with
// blob::RegisterBlobStoreScheme; nothing below client/ names it.
//
// Uncommitted writers leave nothing visible: a failed or abandoned upload is aborted by its writer;
// the parts of an upload cut short by a crash, invisible too, are aborted by the start-up sweep
// (SweepTemporaryFiles) once older than limits::kS3BlobStaleUploadAge.
// Thread-safety: as blob::BlobStore.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "blob/blob_store.h"
#include "client/s3_client.h"
#include "common/limits.h"
#include "common/status.h"

namespace serac::client {

struct S3BlobStoreOptions {
  S3ClientOptions client;  // endpoint, region and keys (the secret is never logged)
  std::string bucket;
  std::string prefix;  // empty, or ending in '/'
  // Uploads of blobs begun longer ago than this and never completed are aborted by the sweep.
  std::chrono::seconds stale_upload_age = limits::kS3BlobStaleUploadAge;
};

// The bucket is created when missing. kInvalidArgument for a bad bucket or prefix, the upstream's
// error when it cannot be reached.
Result<std::unique_ptr<blob::BlobStore>> OpenS3BlobStore(S3BlobStoreOptions options);

// "s3://BUCKET[/PREFIX][?endpoint=URL&region=NAME]": the endpoint defaults to AWS_ENDPOINT_URL, the
// region to AWS_REGION, else us-east-1. The keys come from the environment,
// SERAC_BLOB_S3_ACCESS_KEY_ID and SERAC_BLOB_S3_SECRET_ACCESS_KEY (else AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY), or from the file SERAC_BLOB_S3_CREDENTIALS_FILE names (the access key id
// on its first line, the secret on its second); never from the URL, which is logged.
Result<std::unique_ptr<blob::BlobStore>> OpenS3BlobStoreUrl(std::string_view url);

}  // namespace serac::client
