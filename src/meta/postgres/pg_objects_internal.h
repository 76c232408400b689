// The body of every MetaStore call on PostgreSQL (buckets, objects, multipart uploads, the GC
// queue). Writes run inside a transaction of PgEngine::Write and never clean up after an error:
// the engine rolls the transaction back (and may run the body again on a fresh one).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "meta/meta_store.h"
#include "meta/postgres/pg_connection_internal.h"

namespace serac::meta::postgres {

Result<BucketRecord> GetBucketRead(PgConnection& db, const std::string& name);
Result<std::vector<BucketRecord>> ListBucketsRead(PgConnection& db);
Result<BucketUsage> GetBucketUsageRead(PgConnection& db, const std::string& bucket);
Result<ObjectRecord> GetObjectRead(PgConnection& db, const std::string& bucket, const std::string& key);
Result<std::vector<ObjectRecord>> ListObjectsRead(PgConnection& db, const ListObjectsQuery& query);
Result<UploadRecord> GetUploadRead(PgConnection& db, const std::string& bucket, const std::string& key,
                                   const std::string& upload_id);
Result<std::vector<PartRecord>> ListPartsRead(PgConnection& db, const std::string& upload_id,
                                              uint32_t part_number_marker, uint32_t limit);
Result<std::vector<UploadRecord>> ListUploadsRead(PgConnection& db, const ListUploadsQuery& query);
Result<std::vector<std::string>> PeekGarbageRead(PgConnection& db, uint32_t limit);
Status ForEachReferencedBlobRead(PgConnection& db, const std::function<Status(const std::string&)>& visit);

Status CreateBucketTx(PgConnection& db, const BucketRecord& bucket);
// kConflict when the bucket is a warehouse (the warehouse API removes those).
Status DeleteBucketTx(PgConnection& db, const std::string& name);
// Removes the bucket with every object, upload and part in it; their blobs go to the GC queue.
Status PurgeBucketTx(PgConnection& db, const std::string& name, int64_t now_ms);

// Changes to the use counts of shared texts (objects in pieces), gathered over one write and
// applied at its end: a catalog commit writes a metadata file and removes one trimmed from the
// history, both sharing most of their texts, so only the counts that really move are written, and
// a text the new file names by digest alone is not removed by the trimmed file's release first.
class SharedTextUses {
 public:
  void Use(int64_t id) { ++changes_[id]; }
  void Release(int64_t id) { --changes_[id]; }
  // Applies the counts; a text no object uses any more is removed.
  Status Apply(PgConnection& db);

 private:
  std::map<int64_t, int64_t> changes_;  // text id → change of its use count
};

Status PutObjectTx(PgConnection& db, const ObjectRecord& object, const WriteCondition& condition,
                   int64_t now_ms);
// The same, leaving the use counts of shared texts in `uses` for the caller to apply.
Status PutObjectTx(PgConnection& db, const ObjectRecord& object, const WriteCondition& condition,
                   int64_t now_ms, SharedTextUses& uses);
Status DeleteObjectTx(PgConnection& db, const std::string& bucket, const std::string& key,
                      const WriteCondition& condition, int64_t now_ms, SharedTextUses& uses);
Status SetObjectTagsTx(PgConnection& db, const std::string& bucket, const std::string& key,
                       const std::vector<std::pair<std::string, std::string>>& tags,
                       const WriteCondition& condition);
Status DeleteObjectTx(PgConnection& db, const std::string& bucket, const std::string& key,
                      const WriteCondition& condition, int64_t now_ms);

Status CreateUploadTx(PgConnection& db, const UploadRecord& upload);
Status PutPartTx(PgConnection& db, const std::string& upload_id, const PartRecord& part, int64_t now_ms);
Status CompleteUploadTx(PgConnection& db, const std::string& upload_id, const ObjectRecord& object,
                        const WriteCondition& condition, int64_t now_ms);
Status AbortUploadTx(PgConnection& db, const std::string& bucket, const std::string& key,
                     const std::string& upload_id, int64_t now_ms);

Status ForgetGarbageTx(PgConnection& db, const std::vector<std::string>& blob_ids);

}  // namespace serac::meta::postgres
