// The body of every mutating MetaStore call, run on the writer connection inside a transaction
// (a savepoint of a group commit). Each either completes or returns an error; on error the caller
// rolls the savepoint back, so these functions never clean up after themselves.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "meta/meta_records_internal.h"
#include "meta/meta_store.h"
#include "meta/sqlite/sqlite_db_internal.h"

namespace serac::meta::sqlite {

Status CreateBucketTx(Connection& db, const BucketRecord& bucket);
// kConflict when the bucket is a warehouse (the warehouse API removes those).
Status DeleteBucketTx(Connection& db, const std::string& name);
// Removes the bucket with every object, upload and part in it; their blobs go to the GC queue.
Status PurgeBucketTx(Connection& db, const std::string& name, int64_t now_ms);

// Changes to the use counts of shared texts (objects in pieces), gathered over one write and
// applied at its end. A catalog commit writes a metadata file and removes one trimmed from the
// history; both share most of their pieces, so only the texts whose count really moves are
// updated.
class SharedTextUses {
 public:
  // One more object uses text `id`; `just_stored`: the text was inserted by this write (with no
  // uses yet).
  void Use(int64_t id, bool just_stored);
  void Release(int64_t id);  // one object fewer uses text `id`
  // Applies the counts; a text no object uses any more is removed.
  Status Apply(Connection& db);

 private:
  struct Change {
    int64_t delta = 0;
    bool just_stored = false;
  };
  std::map<int64_t, Change> changes_;
};

// An object's inline bytes as its inline_data row keeps them.
struct InlineBytes {
  InlineEncoding encoding = InlineEncoding::kPlain;
  std::string compressed;  // what the row keeps when encoding is kZstd
};
// Compressed for an object in pieces (a catalog metadata file, JSON) of at least 512 bytes, when
// that is smaller: a commit's new file then takes about a fifth of the pages, which is what each
// commit writes to the log and fsyncs. No database access: callers compute it before they hand
// the write to the group committer, whose writer connection is the store's one serial resource.
InlineBytes EncodeInlineBytes(const ObjectRecord& object);

// `inline_bytes`: EncodeInlineBytes(object).
Status PutObjectTx(Connection& db, const ObjectRecord& object, const InlineBytes& inline_bytes,
                   const WriteCondition& condition, int64_t now_ms);
Status SetObjectTagsTx(Connection& db, const std::string& bucket, const std::string& key,
                       const std::vector<std::pair<std::string, std::string>>& tags,
                       const WriteCondition& condition);
Status DeleteObjectTx(Connection& db, const std::string& bucket, const std::string& key,
                      const WriteCondition& condition, int64_t now_ms);
// The same, leaving the use counts of shared texts in `uses` for the caller to apply.
Status PutObjectTx(Connection& db, const ObjectRecord& object, const InlineBytes& inline_bytes,
                   const WriteCondition& condition, int64_t now_ms, SharedTextUses& uses);
Status DeleteObjectTx(Connection& db, const std::string& bucket, const std::string& key,
                      const WriteCondition& condition, int64_t now_ms, SharedTextUses& uses);

Status CreateUploadTx(Connection& db, const UploadRecord& upload);
Status PutPartTx(Connection& db, const std::string& upload_id, const PartRecord& part, int64_t now_ms);
Status CompleteUploadTx(Connection& db, const std::string& upload_id, const ObjectRecord& object,
                        const WriteCondition& condition, int64_t now_ms);
Status AbortUploadTx(Connection& db, const std::string& bucket, const std::string& key,
                     const std::string& upload_id, int64_t now_ms);

Status ForgetGarbageTx(Connection& db, const std::vector<std::string>& blob_ids);

}  // namespace serac::meta::sqlite
