// Every limit serac enforces, in one place, each named with its unit. Handlers cite these names in
// their error messages so a client learns which limit it hit.
#pragma once

#include <chrono>
#include <cstdint>

namespace serac::limits {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;
inline constexpr uint64_t kGiB = 1024 * kMiB;
inline constexpr uint64_t kTiB = 1024 * kGiB;

// HTTP.
inline constexpr uint64_t kRequestHeaderBytesMax = 16 * kKiB;    // request line + all header lines
inline constexpr uint32_t kRequestHeaderCountMax = 100;          // header fields per request
inline constexpr uint64_t kRequestTargetBytesMax = 8 * kKiB;     // method-independent URL length
inline constexpr uint64_t kXmlRequestBodyBytesMax = 2 * kMiB;    // DeleteObjects, CompleteMultipartUpload
inline constexpr uint64_t kJsonRequestBodyBytesMax = 16 * kMiB;  // catalog requests
inline constexpr uint32_t kConnectionsMax = 4096;                // open client connections
inline constexpr auto kIdleConnectionTimeout = std::chrono::seconds(60);   // keep-alive wait for next request
inline constexpr auto kHeaderReadTimeout = std::chrono::seconds(30);       // first byte to end of headers
inline constexpr auto kBodyStallTimeout = std::chrono::seconds(60);        // no body progress for this long
inline constexpr auto kResponseStallTimeout = std::chrono::seconds(60);    // client reads nothing for this long
inline constexpr auto kShutdownGracePeriod = std::chrono::seconds(30);     // in-flight requests on SIGTERM
inline constexpr uint64_t kIoBufferBytes = 256 * kKiB;                     // per-request streaming buffer

// Outgoing HTTP (http::Send: the CLI, the sync catalog client).
inline constexpr auto kHttpClientConnectTimeout = std::chrono::seconds(10);   // resolve + connect + TLS handshake
inline constexpr auto kHttpClientRequestTimeout = std::chrono::seconds(120);  // whole exchange, connect included
inline constexpr uint64_t kHttpClientResponseHeaderBytesMax = 64 * kKiB;     // status line + response headers
inline constexpr uint64_t kHttpClientResponseBodyBytesMax = 64 * kMiB;       // default cap on a buffered response body
inline constexpr uint32_t kCliListPagesMax = 10000;                        // pages one `serac ... list` follows

// Blob storage.
inline constexpr uint64_t kBlobWriteBufferBytes = 1 * kMiB;   // a blob writer gathers appends up to this before write(2)
inline constexpr uint64_t kBlobCopyChunkBytes = 8 * kMiB;    // one copy_file_range / read-write step of CreateFromRange
inline constexpr uint64_t kUnreadBodyDrainBytesMax = 64 * kKiB;            // unread request body discarded to keep a connection
inline constexpr auto kLingeringCloseTimeout = std::chrono::seconds(2);    // read-and-discard after our FIN so the peer sees the response

// S3 objects.
inline constexpr uint64_t kObjectKeyBytesMax = 1024;               // UTF-8 bytes of an object key
inline constexpr uint64_t kObjectBytesMax = 5 * kTiB;              // one object (multipart)
inline constexpr uint64_t kSinglePutBytesMax = 5 * kGiB;           // one PutObject or UploadPart body
inline constexpr uint64_t kPartBytesMin = 5 * kMiB;                // every multipart part but the last
inline constexpr uint32_t kPartNumberMax = 10000;                  // part numbers 1..10000
inline constexpr uint32_t kPartsPerUploadMax = 10000;
inline constexpr uint32_t kKeysPerListMax = 1000;                  // max-keys / max-uploads / max-parts cap
inline constexpr uint32_t kKeysPerDeleteMax = 1000;                // DeleteObjects batch
inline constexpr uint64_t kUserMetadataBytesMax = 2 * kKiB;        // all x-amz-meta-* names and values
inline constexpr uint64_t kInlineObjectBytesMax = 64 * kKiB;       // objects this small live in the MetaStore row
inline constexpr uint32_t kTagsPerObjectMax = 10;                  // object tags (x-amz-tagging, PutObjectTagging)
inline constexpr uint32_t kTagKeyBytesMax = 128;
inline constexpr uint32_t kTagValueBytesMax = 256;
inline constexpr uint32_t kBucketNameBytesMin = 3;
inline constexpr uint32_t kBucketNameBytesMax = 63;

// Metadata store.
inline constexpr uint32_t kMetaWriteBatchMax = 256;           // writes sharing one group-commit transaction
inline constexpr auto kMetaBusyTimeout = std::chrono::seconds(5);  // wait for a SQLite lock before failing
inline constexpr uint32_t kMetaIdleReadConnectionsMax = 8;    // read connections kept open when idle

// Authentication.
inline constexpr auto kClockSkewMax = std::chrono::minutes(15);
inline constexpr auto kPresignedExpiryMax = std::chrono::seconds(604800);  // 7 days
inline constexpr uint64_t kAwsChunkSizeMin = 8 * kKiB;            // non-final aws-chunked chunk
inline constexpr uint64_t kAwsChunkHeaderBytesMax = 4 * kKiB;      // "<hex>;chunk-signature=...\r\n"
inline constexpr uint64_t kAwsTrailerBytesMax = 16 * kKiB;         // all trailer lines
inline constexpr uint64_t kSigningKeyCacheEntriesMax = 4096;       // derived SigV4 keys kept (per key, day, region, service)

// Server start-up and housekeeping.
inline constexpr uint32_t kRootAccessKeyBytesMin = 3;        // SERAC_ROOT_USER
inline constexpr uint32_t kRootAccessKeyBytesMax = 128;
inline constexpr uint32_t kRootSecretKeyBytesMin = 8;        // SERAC_ROOT_PASSWORD
inline constexpr uint32_t kRootSecretKeyBytesMax = 128;
inline constexpr uint32_t kGeneratedAccessKeyBytes = 20;     // first-start root access key
inline constexpr uint32_t kGeneratedSecretKeyBytes = 40;     // first-start root secret key
inline constexpr uint64_t kRootCredentialsFileBytesMax = 4 * kKiB;
inline constexpr uint32_t kGarbageBatchMax = 256;            // blobs removed per GC round
inline constexpr auto kGarbageCollectionInterval = std::chrono::seconds(1);

// Iceberg metadata.
inline constexpr uint32_t kIcebergTypeNestingDepthMax = 100;  // struct/list/map levels in one schema

// Iceberg REST catalog.
inline constexpr uint32_t kCatalogCommitRetriesMax = 32;          // server-side retries of a commit that lost a race
inline constexpr uint32_t kCatalogPageSizeMax = 1000;             // namespaces / tables / views / warehouses per page
inline constexpr uint32_t kCatalogTablesPerTransactionMax = 100;  // table changes in one transactions/commit
inline constexpr uint64_t kCatalogMetadataFileBytesMax = 64 * kMiB;   // one table or view metadata JSON file read
inline constexpr uint32_t kCatalogMetadataCacheEntriesMax = 1024;  // parsed metadata files kept in memory

}  // namespace serac::limits
