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
inline constexpr uint64_t kRequestHeaderBytesMax = 16 * kKiB;  // request line + all header lines
inline constexpr uint32_t kRequestHeaderCountMax = 100;        // header fields per request
inline constexpr uint64_t kRequestTargetBytesMax = 8 * kKiB;   // method-independent URL length
inline constexpr uint64_t kXmlRequestBodyBytesMax = 2 * kMiB;  // DeleteObjects, CompleteMultipartUpload
// A body sent with an S3 operation that takes none (GET, DELETE, CopyObject, ...): read and checked
// against its signature before the operation acts, and refused beyond this.
inline constexpr uint64_t kUnusedRequestBodyBytesMax = 64 * kKiB;
inline constexpr uint64_t kJsonRequestBodyBytesMax = 16 * kMiB;  // catalog requests
// Arrays and objects inside one another in any JSON text serac parses (request bodies, metadata
// files, policies): Jackson's default, so whatever a Java engine writes, serac reads.
inline constexpr uint32_t kJsonNestingDepthMax = 1000;
// Open client connections. A waiting connection holds no thread, only its socket and a few
// hundred bytes (bench/README.md, "Idle connections"), so this is far above the thread limit.
inline constexpr uint32_t kConnectionsMax = 16384;
// Event loops multiplexing the connections: two per core, and never more than this.
inline constexpr uint32_t kEventLoopsMax = 64;
// Threads running requests at once, counting the spares added to a loop whose every thread is
// blocked (disk, database, group commit, a slow client); requests beyond wait in their loop.
inline constexpr uint32_t kRequestThreadsMax = 1024;
// A loop whose every thread has been inside a request this long, with none starting or ending,
// counts as blocked and gets a spare thread; the balancer looks this often while requests run.
inline constexpr auto kLoopBlockedBeforeSpareThread = std::chrono::milliseconds(1);
inline constexpr auto kBalancerTick = std::chrono::milliseconds(1);
// Open connections from one client address (--connections-per-client-max; 0: no cap, as behind a
// proxy that is every client's address): one client cannot take every connection.
inline constexpr uint32_t kConnectionsPerClientMax = 1024;
inline constexpr auto kIdleConnectionTimeout = std::chrono::seconds(60);  // keep-alive wait for next request
inline constexpr auto kHeaderReadTimeout = std::chrono::seconds(30);      // first byte to end of headers
inline constexpr auto kBodyStallTimeout = std::chrono::seconds(60);       // no body progress for this long
// Every request body has a deadline that only its bytes move: after kRequestBodyGracePeriod it
// must have arrived at kRequestBodyRateMin on average (a client sending a byte a minute is cut off
// then, one sending at any usable speed never is), and no body takes longer than
// kRequestBodyDurationMax (a 5 GiB part at 256 KiB/s).
inline constexpr auto kRequestBodyGracePeriod = std::chrono::seconds(30);
inline constexpr uint64_t kRequestBodyRateMin = 16 * kKiB;  // bytes per second, on average
inline constexpr auto kRequestBodyDurationMax = std::chrono::hours(6);
inline constexpr auto kResponseStallTimeout = std::chrono::seconds(60);  // client reads nothing for this long
inline constexpr auto kShutdownGracePeriod = std::chrono::seconds(30);   // in-flight requests on SIGTERM
inline constexpr uint64_t kIoBufferBytes = 256 * kKiB;                   // per-request streaming buffer
inline constexpr uint64_t kBackgroundDigestBodyBytesMin =
    4 * kMiB;  // bodies this large are hashed on a second thread
inline constexpr uint64_t kBackgroundDigestStageBytes = 1 * kMiB;  // bytes handed to that thread at a time
inline constexpr uint64_t kAccessLogBufferBytesMax = 64 * kKiB;  // access-log lines held before one write(2)
inline constexpr auto kAccessLogFlushInterval =
    std::chrono::milliseconds(100);  // longest an access line waits

// Outgoing HTTP (http::Send: the CLI, the sync catalog client).
inline constexpr auto kHttpClientConnectTimeout =
    std::chrono::seconds(10);  // resolve + connect + TLS handshake
inline constexpr auto kHttpClientRequestTimeout =
    std::chrono::seconds(120);                                            // whole exchange, connect included
inline constexpr uint64_t kHttpClientResponseHeaderBytesMax = 64 * kKiB;  // status line + response headers
inline constexpr uint64_t kHttpClientResponseBodyBytesMax =
    64 * kMiB;                                                  // default cap on a buffered response body
inline constexpr uint32_t kCliListPagesMax = 10000;             // pages one `serac ... list` follows
inline constexpr uint64_t kCliShownFileBytesMax = 1 * kGiB;     // a file `serac file show` reads into memory
inline constexpr uint64_t kSyncConfigFileBytesMax = 64 * kMiB;  // source.json, destination.json, streams.json
// A manifest list a table writer reads whole (a snapshot of ~1 million manifests).
inline constexpr uint64_t kManifestListBytesMax = 256 * kMiB;
// A manifest a table writer reads whole (Java's default target is 8 MiB; one merged by hand can be larger).
inline constexpr uint64_t kManifestBytesMax = 256 * kMiB;
// Memory all Parquet reads together may hold (Arrow's buffers for pages, column chunks and batches):
// a file whose headers claim more fails with an error naming this limit.
inline constexpr uint64_t kParquetReadMemoryBytesMax = 2 * kGiB;
// A position or equality delete file a writer reads whole to merge or apply it.
inline constexpr uint64_t kDeleteFileBytesMax = 1 * kGiB;
// The JSON footer of a Puffin file (deletion vectors, statistics) a reader accepts.
inline constexpr uint64_t kPuffinFooterBytesMax = 16 * kMiB;
// Attempts of one table commit (a writer's append) before it gives up on a table that keeps changing.
inline constexpr uint32_t kTableCommitAttemptsMax = 10;
// The S3 client (client/s3_client.h): bodies above the threshold go up as multipart uploads.
inline constexpr uint64_t kS3ClientMultipartThresholdBytes = 16 * kMiB;
inline constexpr uint64_t kS3ClientPartSizeBytes = 8 * kMiB;
inline constexpr uint32_t kS3ClientPartsInFlightMax = 4;       // UploadParts of one object sent at once
inline constexpr uint64_t kS3ClientObjectBytesMax = 1 * kGiB;  // one GetObject, held in memory
// The blob store in an upstream S3 service (client/s3_blob_store.h): attempts of one idempotent
// request (GET, HEAD, LIST, DELETE) on 503 or a lost answer, the first pause between them
// (doubling), and the bytes one ranged GET of a blob reads ahead.
inline constexpr uint32_t kS3BlobStoreAttemptsMax = 4;
inline constexpr uint32_t kS3BlobStoreRetryBaseMs = 100;
inline constexpr uint64_t kS3BlobReadAheadBytes = 4 * kMiB;
// An upload of a blob begun this long ago and never completed is aborted by the start-up sweep.
inline constexpr std::chrono::seconds kS3BlobStaleUploadAge = std::chrono::hours(1);
// --node-name: the name one server of several answers as (x-serac-node, serac_node_info).
inline constexpr size_t kNodeNameBytesMax = 64;
// OAuth2 tokens the catalog client fetched are renewed this long before they expire.
inline constexpr auto kOAuth2TokenRenewBefore = std::chrono::seconds(60);

// Blob storage.
inline constexpr uint64_t kBlobWriteBufferBytes =
    1 * kMiB;  // a blob writer gathers appends up to this before write(2)
inline constexpr uint64_t kBlobWriteBackStepBytes =
    8 * kMiB;  // a blob writer starts disk write-back every this many bytes
inline constexpr uint64_t kBlobCopyChunkBytes =
    8 * kMiB;  // one copy_file_range / read-write step of CreateFromRange
inline constexpr uint64_t kUnreadBodyDrainBytesMax =
    64 * kKiB;  // unread request body discarded to keep a connection
inline constexpr auto kLingeringCloseTimeout =
    std::chrono::seconds(2);  // read-and-discard after our FIN so the peer sees the response

// S3 objects.
inline constexpr uint64_t kObjectKeyBytesMax = 1024;      // UTF-8 bytes of an object key
inline constexpr uint64_t kObjectBytesMax = 5 * kTiB;     // one object (multipart)
inline constexpr uint64_t kSinglePutBytesMax = 5 * kGiB;  // one PutObject or UploadPart body
inline constexpr uint64_t kPartBytesMin = 5 * kMiB;       // every multipart part but the last
inline constexpr uint32_t kPartNumberMax = 10000;         // part numbers 1..10000
inline constexpr uint32_t kPartsPerUploadMax = 10000;
inline constexpr uint32_t kKeysPerListMax = 1000;             // max-keys / max-uploads / max-parts cap
inline constexpr uint32_t kKeysPerDeleteMax = 1000;           // DeleteObjects batch
inline constexpr uint64_t kUserMetadataBytesMax = 2 * kKiB;   // all x-amz-meta-* names and values
inline constexpr uint64_t kInlineObjectBytesMax = 64 * kKiB;  // objects this small live in the MetaStore row
inline constexpr uint32_t kTagsPerObjectMax = 10;             // object tags (x-amz-tagging, PutObjectTagging)
inline constexpr uint32_t kTagKeyBytesMax = 128;
inline constexpr uint32_t kTagValueBytesMax = 256;
inline constexpr uint32_t kBucketNameBytesMin = 3;
inline constexpr uint32_t kBucketNameBytesMax = 63;

// Metadata store.
inline constexpr uint32_t kMetaWriteBatchMax = 256;  // writes sharing one group-commit transaction
inline constexpr auto kMetaBusyTimeout = std::chrono::seconds(5);  // wait for a SQLite lock before failing
inline constexpr uint32_t kMetaIdleReadConnectionsMax = 8;         // read connections kept open when idle
// PostgreSQL back end (meta/postgres/): connections one server opens at most; how long a call waits
// for one before answering 503; how often a transaction that lost a serialization race or its
// connection (before COMMIT) is run again, with backoff from kPostgresRetryBaseMs; how long a
// COMMIT whose answer was lost is looked up (txid_status) before the outcome is reported unknown.
inline constexpr uint32_t kPostgresConnectionsMax = 32;
inline constexpr auto kPostgresAcquireTimeout = std::chrono::seconds(10);
inline constexpr uint32_t kPostgresAttemptsMax = 10;
inline constexpr uint32_t kPostgresRetryBaseMs = 2;
inline constexpr auto kPostgresOutcomeCheckTimeout = std::chrono::seconds(10);
// Each write leaves a token that tells, after a restart of PostgreSQL, whether it committed; tokens
// are kept this long (far past kPostgresOutcomeCheckTimeout), and deleted at most this often.
inline constexpr auto kPostgresWriteTokenAge = std::chrono::minutes(10);
inline constexpr auto kPostgresWriteTokenSweepInterval = std::chrono::minutes(1);
// Background work on stores several servers share (blob GC, a table's maintenance jobs) runs
// where its lease is held (MetaStore::AcquireLease); a holder renews it every third of this, and
// when it dies another server takes the work over within this.
inline constexpr auto kBackgroundLeaseTtl = std::chrono::seconds(10);

// Authentication.
inline constexpr auto kClockSkewMax = std::chrono::minutes(15);
inline constexpr auto kPresignedExpiryMax = std::chrono::seconds(604800);  // 7 days
inline constexpr uint64_t kAwsChunkSizeMin = 8 * kKiB;                     // non-final aws-chunked chunk
inline constexpr uint64_t kAwsChunkHeaderBytesMax = 4 * kKiB;              // "<hex>;chunk-signature=...\r\n"
inline constexpr uint64_t kAwsTrailerBytesMax = 16 * kKiB;                 // all trailer lines
inline constexpr uint64_t kSigningKeyCacheEntriesMax =
    4096;  // derived SigV4 keys kept (per key, day, region, service)
inline constexpr uint64_t kPolicyDocumentBytesMax = 20 * kKiB;  // one IAM policy document (JSON text)
inline constexpr uint32_t kPolicyStatementsMax = 100;           // statements in one policy document
// How often a server asks the shared store whether another server changed IAM: half the one second
// within which a change must be in force everywhere, so that the look-up and the reload fit in it.
inline constexpr auto kIamRefreshInterval = std::chrono::milliseconds(500);
inline constexpr uint32_t kIamUsersMax = 10000;                          // IAM users in one deployment
inline constexpr uint32_t kIamAccessKeysPerUserMax = 100;                // access keys of one IAM user
inline constexpr uint32_t kIamPoliciesMax = 10000;                       // stored IAM policies
inline constexpr auto kBearerTokenTtlDefault = std::chrono::hours(1);    // OAuth2 access tokens (--token-ttl)
inline constexpr auto kBearerTokenTtlMax = std::chrono::hours(24 * 30);  // largest --token-ttl
inline constexpr auto kSessionCredentialsTtlDefault =
    std::chrono::hours(1);  // vended credentials (--vended-credential-ttl)
// Shortest --vended-credential-ttl. AWS STS grants at least 900 s; serac allows one second so that
// tests can watch credentials expire.
inline constexpr auto kSessionCredentialsTtlMin = std::chrono::seconds(1);
inline constexpr auto kSessionCredentialsTtlMax = std::chrono::hours(12);  // longest, as AWS STS AssumeRole
inline constexpr uint64_t kOAuthTokenRequestBodyBytesMax = 64 * kKiB;      // form body of a token request
inline constexpr uint64_t kBearerTokenBytesMax = 1 * kKiB;          // an OAuth2 bearer token serac accepts
inline constexpr uint64_t kSessionTokenBytesMax = 4 * kKiB;         // a session token (x-amz-security-token)
inline constexpr uint64_t kConsoleSessionTokenBytesMax = 1 * kKiB;  // the web console's session cookie
inline constexpr auto kConsoleSessionTtl = std::chrono::hours(12);  // how long a console sign-in lasts
inline constexpr uint64_t kConsoleSignInBodyBytesMax = 4 * kKiB;    // a console sign-in request body
inline constexpr uint64_t kTokenAccessKeyBytesMax = 128;            // the access key named inside a token
inline constexpr uint64_t kServerKeyFileBytesMax = 1 * kKiB;        // the server key file (one base64 line)
inline constexpr uint64_t kAdminRequestBodyBytesMax = 64 * kKiB;    // one /_serac/admin request body
// Failed sign-ins (a wrong client secret or subject token at the OAuth2 token endpoint) allowed
// within kSignInFailureWindow: per client address and client id, and per client address for any
// client; beyond either, that address is refused until its oldest counted failure leaves the
// window (auth/sign_in_throttle.h). At most kSignInThrottledKeysMax counts are kept.
inline constexpr uint32_t kSignInFailuresPerClientMax = 10;
inline constexpr uint32_t kSignInFailuresPerAddressMax = 100;
inline constexpr auto kSignInFailureWindow = std::chrono::seconds(60);
inline constexpr uint32_t kSignInThrottledKeysMax = 100000;
// Secrets a user chooses: an IAM user's (admin API), root's (SERAC_ROOT_PASSWORD).
inline constexpr uint32_t kUserSecretKeyBytesMin = 20;

// Server start-up and housekeeping.
inline constexpr uint32_t kRootAccessKeyBytesMin = 3;  // SERAC_ROOT_USER
inline constexpr uint32_t kRootAccessKeyBytesMax = 128;
inline constexpr uint32_t kRootSecretKeyBytesMin = 16;  // SERAC_ROOT_PASSWORD
inline constexpr uint32_t kRootSecretKeyBytesMax = 128;
inline constexpr uint32_t kGeneratedAccessKeyBytes = 20;  // first-start root access key
inline constexpr uint32_t kGeneratedSecretKeyBytes = 40;  // first-start root secret key
inline constexpr uint64_t kRootCredentialsFileBytesMax = 4 * kKiB;
inline constexpr uint32_t kGarbageBatchMax = 256;  // blobs removed per GC round
// A blob no index row names counts as an orphan, in stores several servers share, only when it is
// older than this: longer than any upload between its blob commit and its index commit.
inline constexpr auto kSharedStoreOrphanAgeMin = std::chrono::hours(6);
inline constexpr auto kGarbageCollectionInterval = std::chrono::seconds(1);

// Iceberg metadata. Java Iceberg sets none of these; they keep one client from making every later
// commit of a table slow (each commit rewrites the metadata but for its shared history) and are
// far above what engines write: AWS Glue, for comparison, caps a table parameter at 512,000 bytes.
inline constexpr uint32_t kIcebergTypeNestingDepthMax = 100;  // struct/list/map levels in one schema
inline constexpr uint32_t kIcebergSchemaFieldsMax = 32768;    // fields in one schema, nested ones included
inline constexpr uint64_t kIcebergPropertyKeyBytesMax = 4 * kKiB;      // one table or view property name
inline constexpr uint64_t kIcebergPropertyValueBytesMax = 512 * kKiB;  // one table or view property value
inline constexpr uint64_t kIcebergPropertiesBytesMax =
    1 * kMiB;  // all property names and values of one table or view
// The part of a table's metadata that each commit writes anew (everything but the history of
// snapshots and logs, which versions share): schemas, specs, sort orders, properties, refs,
// statistics and the newest history entries.
inline constexpr uint64_t kIcebergMetadataRewrittenBytesMax = 16 * kMiB;

// Avro (manifests, manifest lists and any Avro file serac reads). Java's Avro writes blocks of
// about 64 KB and Iceberg's schemas are a few levels deep; these bound what a hostile file can make
// serac do.
inline constexpr uint32_t kAvroSchemaDepthMax = 128;        // nested types in one Avro schema
inline constexpr uint64_t kAvroHeaderBytesMax = 16 * kMiB;  // a file's header metadata, schema included
inline constexpr uint64_t kAvroBlockBytesMax = 64 * kMiB;   // one block after decompression
inline constexpr uint64_t kAvroFixedBytesMax = 1 * kMiB;    // the size of one Avro fixed type
inline constexpr uint64_t kAvroEmptyItemsMax = 1000000;  // zero-byte values (nulls, empty records) per read

// Iceberg REST catalog.
inline constexpr uint32_t kCatalogCommitRetriesMax = 32;  // server-side retries of a commit that lost a race
inline constexpr uint32_t kCatalogPageSizeMax = 1000;     // namespaces / tables / views / warehouses per page
inline constexpr uint32_t kCatalogTablesPerTransactionMax = 100;  // table changes in one transactions/commit
inline constexpr uint32_t kMaintenanceJobsKeptPerTable =
    100;  // job records kept per table and maintenance type
// The nice value of the thread that runs maintenance jobs (compaction, expiry, ...): beside a
// request thread at 0 it gets about a tenth of a contended core.
inline constexpr int kMaintenanceNice = 10;
inline constexpr uint64_t kMaintenanceSettingBytesMax = 16 * kKiB;  // one maintenance type's settings JSON
// The largest age a maintenance run takes (olderThanSeconds): about a hundred years, so that the
// age in milliseconds stays far from overflowing.
inline constexpr int64_t kMaintenanceRunAgeSecondsMax = 100LL * 366 * 24 * 3600;
// Server-side scan planning: a plan whose data manifests list more live files than this is answered
// with plan tasks, each a run of whole manifests of about this many files, fetched one at a time.
inline constexpr uint32_t kScanPlanFilesPerTask = 2000;
inline constexpr uint32_t kScanPlanDeleteFilesMax =
    1'000'000;                                    // live delete files a planned snapshot may have
inline constexpr uint32_t kScanPlansKept = 4096;  // plan ids remembered for GET and DELETE .../plan/{id}
inline constexpr uint64_t kScanPlansBytesMax = 32 * kMiB;  // the plan tasks of those plans, all together
// A table's preview (GET .../tables/{t}/preview): rows it answers (kTablePreviewRowsDefault when the
// request names no limit), the bytes of one string value shown (then cut on a character), the
// bytes of one binary value shown (as hex), and the bytes of all the values of one answer (rows
// stop there, so a wide table of long values cannot grow one answer without bound).
inline constexpr uint32_t kTablePreviewRowsMax = 1000;
inline constexpr uint32_t kTablePreviewRowsDefault = 100;
inline constexpr uint64_t kTablePreviewCellBytesMax = 1 * kKiB;
inline constexpr uint64_t kTablePreviewBinaryBytesShown = 64;
inline constexpr uint64_t kTablePreviewBytesMax = 16 * kMiB;
inline constexpr uint32_t kTableFilesListedMax = 10000;  // live files one GET .../tables/{t}/files lists
inline constexpr uint32_t kCatalogUpdatesPerCommitMax =
    1000;  // requirements and updates in one table or view commit
inline constexpr uint64_t kCatalogMetadataFileBytesMax =
    64 * kMiB;  // one table or view metadata JSON file, read or written
inline constexpr uint32_t kCatalogMetadataCacheEntriesMax = 1024;  // parsed metadata files kept in memory
// Memory the catalog's caches may take, all of them together at most kCatalogCachesBytesMax
// (estimated from the texts they hold; what a request may hold while it runs is bounded by the
// request limits above). No sequence of requests grows the server past these and its fixed costs.
inline constexpr uint64_t kCatalogMetadataCacheBytesMax = 128 * kMiB;     // parsed table metadata
inline constexpr uint64_t kCatalogViewMetadataCacheBytesMax = 16 * kMiB;  // parsed view metadata
inline constexpr uint32_t kCatalogEntityCacheEntriesMax =
    16384;  // table/view index rows kept in memory for lookups
inline constexpr uint32_t kCatalogMetadataTextCacheEntriesMax =
    256;  // serialised table documents kept for loads
inline constexpr uint64_t kCatalogMetadataTextCacheBytesMax = 64 * kMiB;  // bytes of those documents
inline constexpr uint64_t kCatalogInlineMetadataBytesMax =
    1 * kMiB;  // metadata files this small live in the index row
inline constexpr uint32_t kCatalogHistoryCutCacheEntriesMax =
    1024;  // tables whose last cut into pieces is kept
inline constexpr uint64_t kCatalogHistoryCutCacheBytesMax =
    48 * kMiB;  // bytes of those cuts (chunk texts, entries, runs)
// Answers kept for requests with an Iceberg Idempotency-Key (catalog/idempotency.h), for the
// lifetime /v1/config advertises.
inline constexpr int64_t kIdempotencyKeyLifetimeSeconds = 30 * 60;  // advertised as PT30M
inline constexpr size_t kIdempotencyKeyBytesMax = 128;              // one Idempotency-Key header's value
inline constexpr uint32_t kIdempotencyKeysMax = 100'000;            // keys remembered at once
inline constexpr uint64_t kIdempotentAnswersBytesMax = 32 * kMiB;   // bytes of all answers kept
inline constexpr uint64_t kIdempotentAnswerBytesMax = 4 * kMiB;     // larger answers are not kept
inline constexpr int64_t kIdempotentDuplicateWaitSeconds = 30;  // a duplicate waits for the first this long
inline constexpr uint64_t kCatalogCachesBytesMax =
    kCatalogMetadataCacheBytesMax + kCatalogViewMetadataCacheBytesMax + kCatalogMetadataTextCacheBytesMax +
    kCatalogHistoryCutCacheBytesMax + kScanPlansBytesMax + kIdempotentAnswersBytesMax;

}  // namespace serac::limits
