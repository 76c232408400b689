// The body of every mutating MetaStore call, run on the writer connection inside a transaction
// (a savepoint of a group commit). Each either completes or returns an error; on error the caller
// rolls the savepoint back, so these functions never clean up after themselves.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "meta/meta_store.h"
#include "meta/sqlite/sqlite_db_internal.h"

namespace serac::meta::sqlite {

Status CreateBucketTx(Connection& db, const BucketRecord& bucket);
// kConflict when the bucket is a warehouse (the warehouse API removes those).
Status DeleteBucketTx(Connection& db, const std::string& name);
// Removes the bucket with every object, upload and part in it; their blobs go to the GC queue.
Status PurgeBucketTx(Connection& db, const std::string& name, int64_t now_ms);

Status PutObjectTx(Connection& db, const ObjectRecord& object, const WriteCondition& condition,
                   int64_t now_ms);
Status SetObjectTagsTx(Connection& db, const std::string& bucket, const std::string& key,
                       const std::vector<std::pair<std::string, std::string>>& tags,
                       const WriteCondition& condition);
Status DeleteObjectTx(Connection& db, const std::string& bucket, const std::string& key,
                      const WriteCondition& condition, int64_t now_ms);

Status CreateUploadTx(Connection& db, const UploadRecord& upload);
Status PutPartTx(Connection& db, const std::string& upload_id, const PartRecord& part, int64_t now_ms);
Status CompleteUploadTx(Connection& db, const std::string& upload_id, const ObjectRecord& object,
                        const WriteCondition& condition, int64_t now_ms);
Status AbortUploadTx(Connection& db, const std::string& bucket, const std::string& key,
                     const std::string& upload_id, int64_t now_ms);

Status ForgetGarbageTx(Connection& db, const std::vector<std::string>& blob_ids);

}  // namespace serac::meta::sqlite
