// MetaStore: every piece of state that must change atomically — buckets, the object index,
// multipart uploads and parts, the garbage-collection queue of blobs no longer referenced, (through
// catalog()) the Iceberg catalog's warehouses, namespaces, tables and views, and (through iam())
// users, access keys and policies.
// Each mutating call is one transaction: it either happens entirely or not at all, and when it
// returns OK it is on stable storage. Back ends: sqlite/ (embedded default); postgres/ (shared by
// several servers).
//
// Blob ids are opaque strings here (meta does not depend on blob/). Whenever a call makes a blob
// unreferenced (overwrite, delete, part replacement, abort, complete), it queues that blob id in
// the GC queue inside the same transaction; the caller removes the blob later (PeekGarbage →
// BlobStore::Remove → ForgetGarbage), so no committed state ever points at a missing blob.
//
// Thread-safety: all methods are thread-safe.
//
// One server or several. The embedded back end is opened by one server process at a time; the
// PostgreSQL one is shared by several (open_meta_store.h IsSharedMetaStoreUrl). What one process
// could assume alone, and what stands in for it when the store is shared:
//  - server/server_command.cc `DataDirectoryLock`: DATA_DIR/serac.lock keeps a second server off
//    the same files. Each server of a shared store has a data directory of its own.
//  - meta/sqlite/catalog_read_cache_internal.h: the embedded back end serves catalog rows from
//    memory while no write of this process has moved the cache's generation. The PostgreSQL back
//    end keeps no rows in memory: every read sees every server's commits.
//  - catalog/catalog_service.cc `Backend::CommitLock`: in-memory per-table locks order one table's
//    commits before the compare-and-swap. Correctness comes from the swap (CommitMetadata), which
//    holds across processes; the lock only saves losing writers a retry.
//  - objects/gc.cc `SweepAtStartup` with SweepOptions::exclusive (true with the embedded store): a
//    blob no index row names is an orphan as soon as the server starts, and temporary blob files
//    are leftovers. With a shared store only orphans older than limits::kSharedStoreOrphanAgeMin
//    go, and temporary files stay.
//  - background work — the blob GC and each table's maintenance jobs — runs, with a shared store,
//    on the server holding its lease (AcquireLease; objects/gc.h, catalog/job_lease_owner.h), taken
//    over within limits::kBackgroundLeaseTtl when the holder dies.
//  - auth/identity.cc: IAM changes made through another process are seen within
//    limits::kIamRefreshInterval (the generation poll) plus one look-up, those of this process at once.
// Not assumptions: metadata files are immutable, so the catalog's caches keyed by metadata location
// (catalog/catalog_metadata_io.cc) stay right however many servers write; the GC queue is
// idempotent (PeekGarbage → Remove → ForgetGarbage may run twice for one blob).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "meta/catalog_store.h"
#include "meta/iam_store.h"

namespace serac::meta {

struct BucketRecord {
  std::string name;
  int64_t created_ms = 0;  // Unix epoch milliseconds
};

// One stored stretch of an object's bytes; an object is its segments concatenated in order.
struct Segment {
  std::string blob_id;
  uint64_t size = 0;
};

// One stretch of an object written in pieces (ObjectRecord::pieces). A shared piece names bytes
// that many objects contain and the store keeps once, by digest, for as long as one object uses
// them: successive Iceberg metadata files of a table repeat their whole history, and only the
// newest entries differ. Any other piece is the next `size` bytes of the object's inline_data.
struct Piece {
  uint64_t size = 0;
  std::string sha256;                         // raw 32-byte digest of a shared piece; empty: inline
  std::shared_ptr<const std::string> shared;  // a shared piece's bytes (stored when the digest is new)
};

struct ChecksumRecord {
  std::string algorithm;  // "CRC32", "CRC32C", "CRC64NVME", "SHA1", "SHA256"
  std::string value;      // base64 of the digest; composite values end in "-<parts>"
  std::string type;       // "FULL_OBJECT" or "COMPOSITE"
};

// HTTP headers stored with an object and returned on GET/HEAD.
struct ObjectHeaders {
  std::string content_type;  // empty = not set (GET answers binary/octet-stream)
  std::string content_encoding;
  std::string content_language;
  std::string content_disposition;
  std::string cache_control;
  std::string expires;
  // x-amz-meta-* entries: lower-cased name without the prefix, and value.
  std::vector<std::pair<std::string, std::string>> user_metadata;
  // Object tags (x-amz-tagging), in the order given.
  std::vector<std::pair<std::string, std::string>> tags;
};

struct ObjectRecord {
  std::string bucket;
  std::string key;
  uint64_t size = 0;
  std::string etag;  // unquoted: 32 hex chars, or "<hex>-<parts>" for multipart
  int64_t mtime_ms = 0;
  ObjectHeaders headers;
  std::optional<ChecksumRecord> checksum;
  uint32_t part_count = 0;  // 0 for a single PUT
  // Exactly one of these holds the bytes: inline_data when segments is empty.
  std::string inline_data;
  std::vector<Segment> segments;
  // Written in pieces (segments empty): the bytes are the pieces in order, and inline_data holds
  // the inline pieces back to back. Only PutObject takes pieces; GetObject returns such an
  // object whole, its bytes joined into inline_data and no pieces.
  std::vector<Piece> pieces;
};

// Conditional write/delete, decided inside the transaction.
struct WriteCondition {
  bool if_none_match_any = false;       // If-None-Match: *  → fail if the key exists
  std::optional<std::string> if_match;  // If-Match: etag (unquoted; "*" = must exist)
  // S3's writes and deletes: kAccessDenied when the key is the current metadata file of a table or
  // view (only the catalog's commits change which file that is, and the file never changes).
  bool keep_catalog_metadata = false;
};

// What a bucket holds now: its objects and their bytes (multipart uploads in progress not counted).
struct BucketUsage {
  uint64_t objects = 0;
  uint64_t bytes = 0;
};

struct ListObjectsQuery {
  std::string bucket;
  std::string prefix;       // only keys starting with this
  std::string start_after;  // only keys strictly greater (byte order)
  uint32_t limit = 1000;
  bool with_details = true;  // false: key, size, etag, mtime only (cheaper)
  // Listings never carry inline_data (a page could hold 1000 × 64 KiB); GetObject does.
};

struct UploadRecord {
  std::string upload_id;
  std::string bucket;
  std::string key;
  int64_t initiated_ms = 0;
  ObjectHeaders headers;           // applied to the object on completion
  std::string checksum_algorithm;  // "" or as in ChecksumRecord::algorithm
  std::string checksum_type;       // "" , "FULL_OBJECT" or "COMPOSITE"
};

struct PartRecord {
  uint32_t part_number = 0;
  uint64_t size = 0;
  std::string etag;  // unquoted hex MD5 of the part
  int64_t mtime_ms = 0;
  std::string blob_id;
  std::string checksum_value;  // base64 per the upload's algorithm, or ""
};

// A lease on a unit of background work (blob GC, one table's maintenance jobs): which one of the
// servers sharing this store does it. It runs until expires_ms, measured by the store's own clock
// so that servers whose clocks differ agree on it.
struct LeaseRecord {
  std::string name;
  std::string holder;
  int64_t expires_ms = 0;  // Unix epoch milliseconds, the store's clock
};

struct ListUploadsQuery {
  std::string bucket;
  std::string prefix;
  std::string key_marker;  // uploads with key > marker, or key == marker and id > id_marker
  std::string upload_id_marker;
  uint32_t limit = 1000;
};

class MetaStore {
 public:
  virtual ~MetaStore() = default;

  // Buckets.
  virtual Status CreateBucket(const BucketRecord& bucket) = 0;          // kAlreadyExists
  virtual Result<BucketRecord> GetBucket(const std::string& name) = 0;  // kNotFound
  virtual Result<std::vector<BucketRecord>> ListBuckets() = 0;          // sorted by name
  // kNotFound; kConflict ("The bucket is an Iceberg warehouse; remove it with the warehouse API")
  // when the bucket is a warehouse, decided in the same transaction; kNotEmpty while objects or
  // multipart uploads remain.
  virtual Status DeleteBucket(const std::string& name) = 0;

  // Objects.
  virtual Result<ObjectRecord> GetObject(const std::string& bucket, const std::string& key) = 0;
  // Inserts or replaces (bucket must exist: kNotFound). kPreconditionFailed when `condition` fails.
  // The replaced object's segments go to the GC queue.
  virtual Status PutObject(const ObjectRecord& object, const WriteCondition& condition) = 0;
  // OK also when the key is missing (unless condition.if_match is set: then kPreconditionFailed);
  // kNotFound when the bucket is missing.
  virtual Status DeleteObject(const std::string& bucket, const std::string& key,
                              const WriteCondition& condition) = 0;
  // Keys in byte order. kNotFound if the bucket does not exist.
  virtual Result<std::vector<ObjectRecord>> ListObjects(const ListObjectsQuery& query) = 0;
  // Replaces only the object's tags (headers.tags), leaving its bytes, ETag, checksum, other headers
  // and mtime as they are, so no blob is copied or released. kNotFound when the bucket or the
  // object is missing; kPreconditionFailed when `condition` fails on the existing object.
  virtual Status SetObjectTags(const std::string& bucket, const std::string& key,
                               const std::vector<std::pair<std::string, std::string>>& tags,
                               const WriteCondition& condition) = 0;

  // Multipart uploads.
  virtual Status CreateUpload(const UploadRecord& upload) = 0;  // kNotFound if the bucket is missing
  virtual Result<UploadRecord> GetUpload(const std::string& bucket, const std::string& key,
                                         const std::string& upload_id) = 0;  // kNotFound
  // Adds or replaces a part (the replaced part's blob goes to GC). kNotFound if the upload is gone;
  // the caller then removes the new part's blob itself.
  virtual Status PutPart(const std::string& upload_id, const PartRecord& part) = 0;
  // Parts with number > part_number_marker, ascending, at most `limit`.
  virtual Result<std::vector<PartRecord>> ListParts(const std::string& upload_id, uint32_t part_number_marker,
                                                    uint32_t limit) = 0;
  virtual Result<std::vector<UploadRecord>> ListUploads(const ListUploadsQuery& query) = 0;
  // Atomically: the upload must still exist (kNotFound), `condition` must hold
  // (kPreconditionFailed); `object` (whose segments are blobs of this upload's parts) replaces any
  // existing object; parts not used by `object` and the replaced object's segments go to GC; the
  // upload and its parts are removed.
  virtual Status CompleteUpload(const std::string& upload_id, const ObjectRecord& object,
                                const WriteCondition& condition) = 0;
  // Removes the upload; its parts' blobs go to GC. kNotFound if missing.
  virtual Status AbortUpload(const std::string& bucket, const std::string& key,
                             const std::string& upload_id) = 0;

  // Garbage collection of unreferenced blobs.
  virtual Result<std::vector<std::string>> PeekGarbage(uint32_t limit) = 0;
  virtual Status ForgetGarbage(const std::vector<std::string>& blob_ids) = 0;
  // Calls visit(blob_id) for every blob referenced by an object or a part (start-up orphan sweep).
  virtual Status ForEachReferencedBlob(const std::function<Status(const std::string&)>& visit) = 0;

  // Leases. Acquire takes lease `name` for `holder` until ttl from now, or renews it when `holder`
  // holds it: true when `holder` holds it afterwards, false while another holder's lease runs.
  // Release gives it up at once (OK also when `holder` does not hold it). GetLease: the lease while
  // it runs, nullopt when nobody holds it or it expired.
  virtual Result<bool> AcquireLease(const std::string& name, const std::string& holder,
                                    std::chrono::milliseconds ttl) = 0;
  virtual Status ReleaseLease(const std::string& name, const std::string& holder) = 0;
  virtual Result<std::optional<LeaseRecord>> GetLease(const std::string& name) = 0;
  // Removes the expired leases whose name starts with `prefix` (ASCII): for leases taken once and
  // never released, such as the web console's sign-out records, which would otherwise stay.
  virtual Status ForgetExpiredLeases(const std::string& prefix) = 0;

  // Counts a bucket's objects and bytes (kNotFound for no such bucket). One scan of the bucket's
  // index range: for an overview, not for every request. The default pages through ListObjects;
  // back ends answer it with one aggregate query.
  virtual Result<BucketUsage> GetBucketUsage(const std::string& bucket);

  // Prometheus text of the back end's own figures (connection pool, transactions run again); empty
  // for a back end that has none to report.
  virtual std::string RenderMetrics() { return {}; }

  // The Iceberg catalog's state, in the same database; lives as long as this store.
  virtual CatalogStore& catalog() = 0;
  // Users, access keys and policies, in the same database; lives as long as this store.
  virtual IamStore& iam() = 0;
};

}  // namespace serac::meta
