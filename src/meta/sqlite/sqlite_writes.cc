#include <algorithm>
#include <optional>
#include <unordered_set>

#include "common/zstd.h"
#include "meta/meta_records_internal.h"
#include "meta/sqlite/sqlite_catalog_internal.h"
#include "meta/sqlite/sqlite_writes_internal.h"

namespace serac::meta::sqlite {
namespace {

// What a write needs to know about the object it replaces or deletes.
struct StoredObject {
  std::string etag;
  std::vector<Segment> segments;
  std::optional<int64_t> inline_id;
  std::vector<StoredPiece> pieces;
};

Status RequireBucket(Connection& db, const std::string& bucket) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT 1 FROM buckets WHERE name = ?1;"));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, bucket).Step());
  if (!found) return Error(ErrorCode::kNotFound, "bucket does not exist");
  return Status::Ok();
}

Result<std::optional<StoredObject>> LoadStoredObject(Connection& db, const std::string& bucket,
                                                     const std::string& key) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT etag, segments, inline_id, pieces FROM objects "
                                               "WHERE bucket = ?1 AND key = ?2;"));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, bucket).BindBlob(2, key).Step());
  if (!found) return std::optional<StoredObject>();
  StoredObject stored;
  stored.etag = stmt->Text(0);
  SERAC_ASSIGN_OR_RETURN(stored.segments, DecodeSegments(stmt->Text(1)));
  if (!stmt->IsNull(2)) stored.inline_id = stmt->Int(2);
  SERAC_ASSIGN_OR_RETURN(StoredPieces pieces, DecodePieces(stmt->Text(3)));
  stored.pieces = std::move(pieces.pieces);
  return std::optional<StoredObject>(std::move(stored));
}

Status CheckCondition(const std::optional<StoredObject>& current, const WriteCondition& condition) {
  return CheckWriteCondition(current ? &current->etag : nullptr, condition);
}

// S3 may not replace or delete the current metadata file of a table or view: that would change
// the table behind the catalog's back. The catalog writes new files and never replaces one.
Status CheckNotCatalogMetadata(Connection& db, const std::string& bucket, const std::string& key,
                               const WriteCondition& condition) {
  if (!condition.keep_catalog_metadata) return Status::Ok();
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare("SELECT namespace, name FROM entities WHERE warehouse = ?1 AND "
                                    "metadata_location IN (?2, ?3, ?4) LIMIT 1;"));
  const std::string path = bucket + "/" + key;
  stmt->BindText(1, bucket)
      .BindText(2, "s3://" + path)
      .BindText(3, "s3a://" + path)
      .BindText(4, "s3n://" + path);
  SERAC_ASSIGN_OR_RETURN(bool current, stmt->Step());
  if (!current) return Status::Ok();
  std::string name;
  for (const std::string& level : DecodeNamespacePath(stmt->Blob(0))) name += level + ".";
  return Error(ErrorCode::kAccessDenied,
               "the object is the current metadata file of " + name + stmt->Blob(1) +
                   ", which only the catalog changes (commit through the Iceberg REST "
                   "catalog)");
}

Status QueueGarbage(Connection& db, const std::string& blob_id, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("INSERT OR IGNORE INTO gc_queue(blob_id, queued_ms) "
                                               "VALUES (?1, ?2);"));
  return stmt->BindText(1, blob_id).BindInt(2, now_ms).Run();
}

bool UsesBlob(const std::vector<Segment>& segments, const std::string& blob_id) {
  return std::any_of(segments.begin(), segments.end(),
                     [&](const Segment& segment) { return segment.blob_id == blob_id; });
}

void ReleaseSharedPieces(const std::vector<StoredPiece>& pieces, SharedTextUses& uses) {
  for (const StoredPiece& piece : pieces) {
    if (piece.shared_id != 0) uses.Release(piece.shared_id);
  }
}

// The row id of a shared piece's bytes, stored now if no object holds them yet; counts one use.
Result<int64_t> UseSharedPiece(Connection& db, const Piece& piece, SharedTextUses& uses) {
  SERAC_ASSIGN_OR_RETURN(auto find, db.Prepare("SELECT id FROM shared_texts WHERE sha256 = ?1;"));
  SERAC_ASSIGN_OR_RETURN(bool found, find->BindBlob(1, piece.sha256).Step());
  if (found) {
    const int64_t id = find->Int(0);
    find->Reset();
    uses.Use(id, false);
    return id;
  }
  find->Reset();
  if (!piece.shared || piece.shared->size() != piece.size) {
    return Error(ErrorCode::kInternal, "a new shared piece needs its bytes");
  }
  SERAC_ASSIGN_OR_RETURN(auto insert, db.Prepare("INSERT INTO shared_texts(sha256, bytes) VALUES (?1, ?2);"));
  SERAC_RETURN_IF_ERROR(insert->BindBlob(1, piece.sha256).BindBlob(2, *piece.shared).Run());
  const int64_t id = db.LastInsertRowId();
  SERAC_ASSIGN_OR_RETURN(auto count, db.Prepare("INSERT INTO shared_text_uses(id, uses) VALUES (?1, 0);"));
  SERAC_RETURN_IF_ERROR(count->BindInt(1, id).Run());
  uses.Use(id, true);
  return id;
}

Result<std::string> StorePieces(Connection& db, const std::vector<Piece>& pieces,
                                InlineEncoding inline_encoding, SharedTextUses& uses) {
  StoredPieces stored;
  stored.inline_encoding = inline_encoding;
  stored.pieces.reserve(pieces.size());
  for (const Piece& piece : pieces) {
    StoredPiece& entry = stored.pieces.emplace_back(StoredPiece{piece.size, 0});
    if (!piece.sha256.empty()) {
      SERAC_ASSIGN_OR_RETURN(entry.shared_id, UseSharedPiece(db, piece, uses));
    }
  }
  return EncodePieces(stored);
}

// Queues the blobs of an object that is going away, except those its successor still uses.
Status ReleaseStoredObject(Connection& db, const StoredObject& stored, const std::vector<Segment>& still_used,
                           int64_t now_ms, SharedTextUses& uses) {
  for (const Segment& segment : stored.segments) {
    if (!UsesBlob(still_used, segment.blob_id)) {
      SERAC_RETURN_IF_ERROR(QueueGarbage(db, segment.blob_id, now_ms));
    }
  }
  ReleaseSharedPieces(stored.pieces, uses);
  if (!stored.inline_id) return Status::Ok();
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("DELETE FROM inline_data WHERE id = ?1;"));
  return stmt->BindInt(1, *stored.inline_id).Run();
}

Result<std::optional<int64_t>> InsertInlineData(Connection& db, const std::string& data) {
  if (data.empty()) return std::optional<int64_t>();
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("INSERT INTO inline_data(data) VALUES (?1);"));
  SERAC_RETURN_IF_ERROR(stmt->BindBlob(1, data).Run());
  return std::optional<int64_t>(db.LastInsertRowId());
}

void BindOptionalText(Statement& stmt, int index, const std::string& text) {
  if (text.empty()) {
    stmt.BindNull(index);
  } else {
    stmt.BindText(index, text);
  }
}

void BindChecksum(Statement& stmt, const std::optional<ChecksumRecord>& checksum) {
  if (!checksum) {
    stmt.BindNull(8).BindNull(9).BindNull(10);
    return;
  }
  stmt.BindText(8, checksum->algorithm).BindText(9, checksum->value).BindText(10, checksum->type);
}

// Inserts the row, replacing any row of the same key (whose blobs the caller has released).
Status WriteObjectRow(Connection& db, const ObjectRecord& object, const InlineBytes& inline_bytes,
                      SharedTextUses& uses) {
  SERAC_RETURN_IF_ERROR(ValidateObject(object));
  const bool compressed = inline_bytes.encoding == InlineEncoding::kZstd;
  SERAC_ASSIGN_OR_RETURN(std::optional<int64_t> inline_id,
                         InsertInlineData(db, compressed ? inline_bytes.compressed : object.inline_data));
  std::string pieces;
  if (!object.pieces.empty()) {
    SERAC_ASSIGN_OR_RETURN(pieces, StorePieces(db, object.pieces, inline_bytes.encoding, uses));
  }
  SERAC_ASSIGN_OR_RETURN(
      auto stmt,
      db.Prepare("INSERT OR REPLACE INTO objects(bucket, key, size, etag, mtime_ms, part_count, "
                 "headers, checksum_algorithm, checksum_value, checksum_type, inline_id, segments, pieces) "
                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13);"));
  stmt->BindText(1, object.bucket).BindBlob(2, object.key);
  stmt->BindInt(3, static_cast<int64_t>(object.size)).BindText(4, object.etag);
  stmt->BindInt(5, object.mtime_ms).BindInt(6, object.part_count);
  BindOptionalText(*stmt, 7, EncodeHeaders(object.headers));
  BindChecksum(*stmt, object.checksum);
  if (inline_id) {
    stmt->BindInt(11, *inline_id);
  } else {
    stmt->BindNull(11);
  }
  BindOptionalText(*stmt, 12, object.segments.empty() ? "" : EncodeSegments(object.segments));
  BindOptionalText(*stmt, 13, pieces);
  return stmt->Run();
}

// Replaces whatever is stored under the object's key once `condition` holds.
Status ReplaceObject(Connection& db, const ObjectRecord& object, const InlineBytes& inline_bytes,
                     const WriteCondition& condition, int64_t now_ms, SharedTextUses& uses) {
  SERAC_ASSIGN_OR_RETURN(auto stored, LoadStoredObject(db, object.bucket, object.key));
  SERAC_RETURN_IF_ERROR(CheckCondition(stored, condition));
  if (stored) SERAC_RETURN_IF_ERROR(CheckNotCatalogMetadata(db, object.bucket, object.key, condition));
  if (stored) SERAC_RETURN_IF_ERROR(ReleaseStoredObject(db, *stored, object.segments, now_ms, uses));
  return WriteObjectRow(db, object, inline_bytes, uses);
}

struct UploadKey {
  std::string bucket;
  std::string key;
};

Result<std::optional<UploadKey>> LoadUploadKey(Connection& db, const std::string& upload_id) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT bucket, key FROM uploads WHERE upload_id = ?1;"));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, upload_id).Step());
  if (!found) return std::optional<UploadKey>();
  return std::optional<UploadKey>(UploadKey{stmt->Text(0), stmt->Blob(1)});
}

Status UploadMissing() { return Error(ErrorCode::kNotFound, "multipart upload does not exist"); }

Result<std::vector<std::string>> LoadPartBlobs(Connection& db, const std::string& upload_id) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT blob_id FROM parts WHERE upload_id = ?1;"));
  stmt->BindText(1, upload_id);
  std::vector<std::string> blob_ids;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return blob_ids;
    blob_ids.push_back(stmt->Text(0));
  }
}

// Removes the upload and its parts, queueing every part blob `object_segments` does not use.
Status RemoveUpload(Connection& db, const std::string& upload_id, const std::vector<Segment>& object_segments,
                    int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(std::vector<std::string> part_blobs, LoadPartBlobs(db, upload_id));
  for (const std::string& blob_id : part_blobs) {
    if (!UsesBlob(object_segments, blob_id)) SERAC_RETURN_IF_ERROR(QueueGarbage(db, blob_id, now_ms));
  }
  SERAC_ASSIGN_OR_RETURN(auto parts, db.Prepare("DELETE FROM parts WHERE upload_id = ?1;"));
  SERAC_RETURN_IF_ERROR(parts->BindText(1, upload_id).Run());
  SERAC_ASSIGN_OR_RETURN(auto upload, db.Prepare("DELETE FROM uploads WHERE upload_id = ?1;"));
  return upload->BindText(1, upload_id).Run();
}

Result<bool> HasRows(Connection& db, const std::string& sql, const std::string& bucket) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
  return stmt->BindText(1, bucket).Step();
}

Status RunForBucket(Connection& db, const std::string& sql, const std::string& bucket) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
  return stmt->BindText(1, bucket).Run();
}

Status QueueObjectBlobsOfBucket(Connection& db, const std::string& bucket, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT segments FROM objects "
                                               "WHERE bucket = ?1 AND segments IS NOT NULL;"));
  stmt->BindText(1, bucket);
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return Status::Ok();
    SERAC_ASSIGN_OR_RETURN(std::vector<Segment> segments, DecodeSegments(stmt->Text(0)));
    for (const Segment& segment : segments) SERAC_RETURN_IF_ERROR(QueueGarbage(db, segment.blob_id, now_ms));
  }
}

Status ReleaseSharedPiecesOfBucket(Connection& db, const std::string& bucket) {
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare("SELECT pieces FROM objects WHERE bucket = ?1 AND pieces IS NOT NULL;"));
  stmt->BindText(1, bucket);
  std::vector<StoredPiece> pieces;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) break;
    SERAC_ASSIGN_OR_RETURN(StoredPieces more, DecodePieces(stmt->Text(0)));
    pieces.insert(pieces.end(), more.pieces.begin(), more.pieces.end());
  }
  stmt->Reset();
  SharedTextUses uses;
  ReleaseSharedPieces(pieces, uses);
  return uses.Apply(db);
}

Status QueuePartBlobsOfBucket(Connection& db, const std::string& bucket, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT blob_id FROM parts WHERE upload_id IN "
                                               "(SELECT upload_id FROM uploads WHERE bucket = ?1);"));
  stmt->BindText(1, bucket);
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return Status::Ok();
    SERAC_RETURN_IF_ERROR(QueueGarbage(db, stmt->Text(0), now_ms));
  }
}

}  // namespace

void SharedTextUses::Use(int64_t id, bool just_stored) {
  Change& change = changes_[id];
  ++change.delta;
  change.just_stored = change.just_stored || just_stored;
}

void SharedTextUses::Release(int64_t id) { --changes_[id].delta; }

Status SharedTextUses::Apply(Connection& db) {
  // A few statements whatever the number of texts: one per distinct change of count (nearly
  // always +1 for the new file's pieces and -1 for the trimmed one's), each over a JSON array of
  // ids, then two that remove the texts left without uses.
  struct Ids {
    std::string json;  // "[1,2,...]"
    int64_t count = 0;
    void Add(int64_t id) {
      json += json.empty() ? '[' : ',';
      json += std::to_string(id);
      ++count;
    }
  };
  std::map<int64_t, Ids> by_delta;
  Ids maybe_unused;  // losing uses, or stored by this write and used by nothing in the end
  for (const auto& [id, change] : changes_) {
    if (change.delta != 0) by_delta[change.delta].Add(id);
    if (change.delta < 0 || (change.just_stored && change.delta == 0)) maybe_unused.Add(id);
  }
  for (auto& [delta, ids] : by_delta) {
    ids.json += ']';
    // A count never goes below zero: fewer rows changed than ids means a text missing or released
    // more often than it is used, which only a bug can cause.
    SERAC_ASSIGN_OR_RETURN(auto update, db.Prepare("UPDATE shared_text_uses SET uses = uses + ?1 "
                                                   "WHERE id IN (SELECT value FROM json_each(?2)) "
                                                   "AND uses + ?1 >= 0;"));
    SERAC_RETURN_IF_ERROR(update->BindInt(1, delta).BindText(2, ids.json).Run());
    if (db.Changes() != ids.count) {
      return Error(ErrorCode::kInternal,
                   "a shared text is not stored, or is released more often than it is used");
    }
  }
  if (maybe_unused.count > 0) {
    maybe_unused.json += ']';
    SERAC_ASSIGN_OR_RETURN(auto remove, db.Prepare("DELETE FROM shared_texts WHERE id IN ("
                                                   "SELECT id FROM shared_text_uses WHERE uses = 0 "
                                                   "AND id IN (SELECT value FROM json_each(?1)));"));
    SERAC_RETURN_IF_ERROR(remove->BindText(1, maybe_unused.json).Run());
    SERAC_ASSIGN_OR_RETURN(auto forget, db.Prepare("DELETE FROM shared_text_uses WHERE uses = 0 "
                                                   "AND id IN (SELECT value FROM json_each(?1));"));
    SERAC_RETURN_IF_ERROR(forget->BindText(1, maybe_unused.json).Run());
  }
  changes_.clear();
  return Status::Ok();
}

Status CreateBucketTx(Connection& db, const BucketRecord& bucket) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("INSERT OR IGNORE INTO buckets(name, created_ms) "
                                               "VALUES (?1, ?2);"));
  SERAC_RETURN_IF_ERROR(stmt->BindText(1, bucket.name).BindInt(2, bucket.created_ms).Run());
  if (db.Changes() == 0) return Error(ErrorCode::kAlreadyExists, "bucket already exists");
  return Status::Ok();
}

Status DeleteBucketTx(Connection& db, const std::string& name) {
  SERAC_RETURN_IF_ERROR(RequireBucket(db, name));
  SERAC_ASSIGN_OR_RETURN(bool is_warehouse, IsWarehouse(db, name));
  if (is_warehouse) {
    return Error(ErrorCode::kConflict,
                 "The bucket is an Iceberg warehouse; remove it with the warehouse API");
  }
  SERAC_ASSIGN_OR_RETURN(bool has_objects,
                         HasRows(db, "SELECT 1 FROM objects WHERE bucket = ?1 LIMIT 1;", name));
  SERAC_ASSIGN_OR_RETURN(bool has_uploads,
                         HasRows(db, "SELECT 1 FROM uploads WHERE bucket = ?1 LIMIT 1;", name));
  if (has_objects || has_uploads) {
    return Error(ErrorCode::kNotEmpty, "bucket still holds objects or multipart uploads");
  }
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("DELETE FROM buckets WHERE name = ?1;"));
  return stmt->BindText(1, name).Run();
}

Status PurgeBucketTx(Connection& db, const std::string& name, int64_t now_ms) {
  SERAC_RETURN_IF_ERROR(RequireBucket(db, name));
  SERAC_RETURN_IF_ERROR(QueueObjectBlobsOfBucket(db, name, now_ms));
  SERAC_RETURN_IF_ERROR(ReleaseSharedPiecesOfBucket(db, name));
  SERAC_RETURN_IF_ERROR(RunForBucket(db,
                                     "DELETE FROM inline_data WHERE id IN (SELECT inline_id FROM objects "
                                     "WHERE bucket = ?1 AND inline_id IS NOT NULL);",
                                     name));
  SERAC_RETURN_IF_ERROR(RunForBucket(db, "DELETE FROM objects WHERE bucket = ?1;", name));
  SERAC_RETURN_IF_ERROR(QueuePartBlobsOfBucket(db, name, now_ms));
  SERAC_RETURN_IF_ERROR(RunForBucket(
      db, "DELETE FROM parts WHERE upload_id IN (SELECT upload_id FROM uploads WHERE bucket = ?1);", name));
  SERAC_RETURN_IF_ERROR(RunForBucket(db, "DELETE FROM uploads WHERE bucket = ?1;", name));
  return RunForBucket(db, "DELETE FROM buckets WHERE name = ?1;", name);
}

// Inline bytes of an object in pieces are compressed from this size on.
constexpr size_t kCompressedInlineBytesMin = 512;
constexpr int kInlineZstdLevel = 1;  // the fastest; metadata JSON still shrinks about 5 times

InlineBytes EncodeInlineBytes(const ObjectRecord& object) {
  InlineBytes encoded;
  if (object.pieces.empty() || object.inline_data.size() < kCompressedInlineBytesMin) return encoded;
  std::string compressed = zstd::Compress(object.inline_data, kInlineZstdLevel);
  if (compressed.empty() || compressed.size() >= object.inline_data.size()) return encoded;
  encoded.encoding = InlineEncoding::kZstd;
  encoded.compressed = std::move(compressed);
  return encoded;
}

Status PutObjectTx(Connection& db, const ObjectRecord& object, const InlineBytes& inline_bytes,
                   const WriteCondition& condition, int64_t now_ms, SharedTextUses& uses) {
  SERAC_RETURN_IF_ERROR(RequireBucket(db, object.bucket));
  return ReplaceObject(db, object, inline_bytes, condition, now_ms, uses);
}

Status PutObjectTx(Connection& db, const ObjectRecord& object, const InlineBytes& inline_bytes,
                   const WriteCondition& condition, int64_t now_ms) {
  SharedTextUses uses;
  SERAC_RETURN_IF_ERROR(PutObjectTx(db, object, inline_bytes, condition, now_ms, uses));
  return uses.Apply(db);
}

Status SetObjectTagsTx(Connection& db, const std::string& bucket, const std::string& key,
                       const std::vector<std::pair<std::string, std::string>>& tags,
                       const WriteCondition& condition) {
  SERAC_ASSIGN_OR_RETURN(auto stored, LoadStoredObject(db, bucket, key));
  if (!stored) {
    SERAC_RETURN_IF_ERROR(RequireBucket(db, bucket));
    return Error(ErrorCode::kNotFound, "object does not exist");
  }
  SERAC_RETURN_IF_ERROR(CheckCondition(stored, condition));
  SERAC_ASSIGN_OR_RETURN(auto read,
                         db.Prepare("SELECT headers FROM objects WHERE bucket = ?1 AND key = ?2;"));
  SERAC_ASSIGN_OR_RETURN(bool found, read->BindText(1, bucket).BindBlob(2, key).Step());
  if (!found) return Error(ErrorCode::kInternal, "object row vanished inside its transaction");
  ObjectHeaders headers;
  if (!read->IsNull(0)) {
    SERAC_ASSIGN_OR_RETURN(headers, DecodeHeaders(read->Text(0)));
  }
  headers.tags = tags;
  SERAC_ASSIGN_OR_RETURN(auto update,
                         db.Prepare("UPDATE objects SET headers = ?1 WHERE bucket = ?2 AND key = ?3;"));
  BindOptionalText(*update, 1, EncodeHeaders(headers));
  update->BindText(2, bucket).BindBlob(3, key);
  return update->Run();
}

Status DeleteObjectTx(Connection& db, const std::string& bucket, const std::string& key,
                      const WriteCondition& condition, int64_t now_ms, SharedTextUses& uses) {
  SERAC_ASSIGN_OR_RETURN(auto stored, LoadStoredObject(db, bucket, key));
  SERAC_RETURN_IF_ERROR(CheckCondition(stored, condition));
  if (!stored) return RequireBucket(db, bucket);
  SERAC_RETURN_IF_ERROR(CheckNotCatalogMetadata(db, bucket, key, condition));
  SERAC_RETURN_IF_ERROR(ReleaseStoredObject(db, *stored, {}, now_ms, uses));
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("DELETE FROM objects WHERE bucket = ?1 AND key = ?2;"));
  return stmt->BindText(1, bucket).BindBlob(2, key).Run();
}

Status DeleteObjectTx(Connection& db, const std::string& bucket, const std::string& key,
                      const WriteCondition& condition, int64_t now_ms) {
  SharedTextUses uses;
  SERAC_RETURN_IF_ERROR(DeleteObjectTx(db, bucket, key, condition, now_ms, uses));
  return uses.Apply(db);
}

Status CreateUploadTx(Connection& db, const UploadRecord& upload) {
  SERAC_RETURN_IF_ERROR(RequireBucket(db, upload.bucket));
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare("INSERT OR IGNORE INTO uploads(upload_id, bucket, key, initiated_ms, "
                                    "headers, checksum_algorithm, checksum_type) "
                                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7);"));
  stmt->BindText(1, upload.upload_id).BindText(2, upload.bucket).BindBlob(3, upload.key);
  stmt->BindInt(4, upload.initiated_ms);
  BindOptionalText(*stmt, 5, EncodeHeaders(upload.headers));
  stmt->BindText(6, upload.checksum_algorithm).BindText(7, upload.checksum_type);
  SERAC_RETURN_IF_ERROR(stmt->Run());
  if (db.Changes() == 0) return Error(ErrorCode::kAlreadyExists, "upload id already in use");
  return Status::Ok();
}

Status PutPartTx(Connection& db, const std::string& upload_id, const PartRecord& part, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(auto upload, LoadUploadKey(db, upload_id));
  if (!upload) return UploadMissing();
  SERAC_ASSIGN_OR_RETURN(auto old, db.Prepare("SELECT blob_id FROM parts "
                                              "WHERE upload_id = ?1 AND part_number = ?2;"));
  SERAC_ASSIGN_OR_RETURN(bool replacing, old->BindText(1, upload_id).BindInt(2, part.part_number).Step());
  if (replacing && old->Text(0) != part.blob_id) {
    SERAC_RETURN_IF_ERROR(QueueGarbage(db, old->Text(0), now_ms));
  }
  SERAC_ASSIGN_OR_RETURN(
      auto stmt, db.Prepare("INSERT OR REPLACE INTO parts(upload_id, part_number, size, etag, "
                            "mtime_ms, blob_id, checksum_value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7);"));
  stmt->BindText(1, upload_id).BindInt(2, part.part_number);
  stmt->BindInt(3, static_cast<int64_t>(part.size)).BindText(4, part.etag);
  stmt->BindInt(5, part.mtime_ms).BindText(6, part.blob_id).BindText(7, part.checksum_value);
  return stmt->Run();
}

Status CompleteUploadTx(Connection& db, const std::string& upload_id, const ObjectRecord& object,
                        const WriteCondition& condition, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(auto upload, LoadUploadKey(db, upload_id));
  if (!upload || upload->bucket != object.bucket || upload->key != object.key) {
    return UploadMissing();
  }
  // The object was assembled from the parts as they were read before this transaction; a part
  // uploaded again since then has a new blob, and its old one is already queued for collection.
  SERAC_ASSIGN_OR_RETURN(std::vector<std::string> part_blobs, LoadPartBlobs(db, upload_id));
  std::unordered_set<std::string> current(part_blobs.begin(), part_blobs.end());
  for (const Segment& segment : object.segments) {
    if (current.count(segment.blob_id) == 0) {
      return Error(ErrorCode::kConflict, "a part was uploaded again while the upload was being completed");
    }
  }
  SharedTextUses uses;  // a completed upload has no pieces, but may replace an object in pieces
  SERAC_RETURN_IF_ERROR(ReplaceObject(db, object, InlineBytes{}, condition, now_ms, uses));
  SERAC_RETURN_IF_ERROR(uses.Apply(db));
  return RemoveUpload(db, upload_id, object.segments, now_ms);
}

Status AbortUploadTx(Connection& db, const std::string& bucket, const std::string& key,
                     const std::string& upload_id, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(auto upload, LoadUploadKey(db, upload_id));
  if (!upload || upload->bucket != bucket || upload->key != key) return UploadMissing();
  return RemoveUpload(db, upload_id, {}, now_ms);
}

Status ForgetGarbageTx(Connection& db, const std::vector<std::string>& blob_ids) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("DELETE FROM gc_queue WHERE blob_id = ?1;"));
  for (const std::string& blob_id : blob_ids) {
    SERAC_RETURN_IF_ERROR(stmt->BindText(1, blob_id).Run());
    stmt->Reset();
  }
  return Status::Ok();
}

}  // namespace serac::meta::sqlite
