#include <algorithm>
#include <optional>
#include <unordered_set>

#include "meta/meta_records_internal.h"
#include "meta/postgres/pg_catalog_internal.h"
#include "meta/postgres/pg_objects_internal.h"

namespace serac::meta::postgres {
namespace {

// Columns of a listing row; the detailed form adds the rest of the record except inline bytes,
// which only GetObject returns (a page of listings must not drag along 64 KiB per key).
constexpr const char* kBriefObjectColumns = "key, size, etag, mtime_ms";
constexpr const char* kDetailedObjectColumns =
    "key, size, etag, mtime_ms, part_count, headers, checksum_algorithm, checksum_value, "
    "checksum_type, segments";

constexpr const char* kUploadColumns =
    "upload_id, bucket, key, initiated_ms, headers, checksum_algorithm, checksum_type";

void ReadBriefObject(const PgRows& rows, int row, ObjectRecord& object) {
  object.key = rows.Text(row, 0);
  object.size = static_cast<uint64_t>(rows.Int(row, 1));
  object.etag = rows.Text(row, 2);
  object.mtime_ms = rows.Int(row, 3);
}

Status ReadDetailedObject(const PgRows& rows, int row, ObjectRecord& object) {
  ReadBriefObject(rows, row, object);
  object.part_count = static_cast<uint32_t>(rows.Int(row, 4));
  SERAC_ASSIGN_OR_RETURN(object.headers, DecodeHeaders(rows.Text(row, 5)));
  if (!rows.IsNull(row, 6)) {
    object.checksum = ChecksumRecord{rows.Text(row, 6), rows.Text(row, 7), rows.Text(row, 8)};
  }
  SERAC_ASSIGN_OR_RETURN(object.segments, DecodeSegments(rows.Text(row, 9)));
  return Status::Ok();
}

Result<UploadRecord> ReadUpload(const PgRows& rows, int row) {
  UploadRecord upload;
  upload.upload_id = rows.Text(row, 0);
  upload.bucket = rows.Text(row, 1);
  upload.key = rows.Text(row, 2);
  upload.initiated_ms = rows.Int(row, 3);
  SERAC_ASSIGN_OR_RETURN(upload.headers, DecodeHeaders(rows.Text(row, 4)));
  upload.checksum_algorithm = rows.Text(row, 5);
  upload.checksum_type = rows.Text(row, 6);
  return upload;
}

// The smallest key greater than every key starting with `prefix`; nullopt when there is none
// (an empty prefix, or one of 0xFF bytes only).
std::optional<std::string> PrefixSuccessor(const std::string& prefix) {
  std::string successor = prefix;
  while (!successor.empty() && static_cast<unsigned char>(successor.back()) == 0xFF) successor.pop_back();
  if (successor.empty()) return std::nullopt;
  successor.back() = static_cast<char>(static_cast<unsigned char>(successor.back()) + 1);
  return successor;
}

// Without an upper bound the statement still takes $3: a key no listing reaches is never
// compared, since "key < $3 OR $3 IS NULL" keeps one prepared statement per shape.
std::string ListObjectsSql(bool with_details, bool lower_inclusive) {
  std::string sql = "SELECT ";
  sql += with_details ? kDetailedObjectColumns : kBriefObjectColumns;
  sql += " FROM objects WHERE bucket = $1 AND key ";
  sql += lower_inclusive ? ">= $2" : "> $2";
  sql += " AND ($3::bytea IS NULL OR key < $3) ORDER BY key LIMIT $4";
  return sql;
}

PgParam OptionalText(const std::string& text) {
  return text.empty() ? PgParam::NullText() : PgParam::Text(text);
}

Status RequireBucket(PgConnection& db, const std::string& bucket) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows,
                         db.Query("SELECT 1 FROM buckets WHERE name = $1", {PgParam::Text(bucket)}));
  if (rows.empty()) return Error(ErrorCode::kNotFound, "bucket does not exist");
  return Status::Ok();
}

Status RequireUpload(PgConnection& db, const std::string& upload_id) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows,
                         db.Query("SELECT 1 FROM uploads WHERE upload_id = $1", {PgParam::Text(upload_id)}));
  if (rows.empty()) return Error(ErrorCode::kNotFound, "multipart upload does not exist");
  return Status::Ok();
}

// What a write needs to know about the object it replaces or deletes.
struct StoredObject {
  std::string etag;
  std::vector<Segment> segments;
  std::vector<StoredPiece> pieces;
};

// FOR UPDATE: two writers of one key meet here, and the second waits for the first's outcome
// instead of both going on to a serialization failure at commit.
Result<std::optional<StoredObject>> LoadStoredObject(PgConnection& db, const std::string& bucket,
                                                     const std::string& key) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query("SELECT etag, segments, pieces FROM objects "
                                               "WHERE bucket = $1 AND key = $2 FOR UPDATE",
                                               {PgParam::Text(bucket), PgParam::Bytes(key)}));
  if (rows.empty()) return std::optional<StoredObject>();
  StoredObject stored;
  stored.etag = rows.Text(0, 0);
  SERAC_ASSIGN_OR_RETURN(stored.segments, DecodeSegments(rows.Text(0, 1)));
  SERAC_ASSIGN_OR_RETURN(StoredPieces pieces, DecodePieces(rows.Text(0, 2)));
  stored.pieces = std::move(pieces.pieces);
  return std::optional<StoredObject>(std::move(stored));
}

Status CheckCondition(const std::optional<StoredObject>& current, const WriteCondition& condition) {
  return CheckWriteCondition(current ? &current->etag : nullptr, condition);
}

// S3 may not replace or delete the current metadata file of a table or view: that would change
// the table behind the catalog's back. The catalog writes new files and never replaces one.
Status CheckNotCatalogMetadata(PgConnection& db, const std::string& bucket, const std::string& key,
                               const WriteCondition& condition) {
  if (!condition.keep_catalog_metadata) return Status::Ok();
  const std::string path = bucket + "/" + key;
  SERAC_ASSIGN_OR_RETURN(PgRows rows,
                         db.Query("SELECT namespace, name FROM entities WHERE warehouse = $1 AND "
                                  "metadata_location IN ($2, $3, $4) LIMIT 1",
                                  {PgParam::Text(bucket), PgParam::Text("s3://" + path),
                                   PgParam::Text("s3a://" + path), PgParam::Text("s3n://" + path)}));
  if (rows.empty()) return Status::Ok();
  std::string name;
  for (const std::string& level : DecodeNamespacePath(rows.Text(0, 0))) name += level + ".";
  return Error(ErrorCode::kAccessDenied, "the object is the current metadata file of " + name +
                                             rows.Text(0, 1) +
                                             ", which only the catalog changes (commit through the Iceberg "
                                             "REST catalog)");
}

Status QueueGarbage(PgConnection& db, const std::string& blob_id, int64_t now_ms) {
  return db
      .Query("INSERT INTO gc_queue(blob_id, queued_ms) VALUES ($1, $2) ON CONFLICT DO NOTHING",
             {PgParam::Text(blob_id), PgParam::Int(now_ms)})
      .status();
}

bool UsesBlob(const std::vector<Segment>& segments, const std::string& blob_id) {
  return std::any_of(segments.begin(), segments.end(),
                     [&](const Segment& segment) { return segment.blob_id == blob_id; });
}

// Queues the blobs of an object that is going away, except those its successor still uses.
Status ReleaseStoredObject(PgConnection& db, const StoredObject& stored,
                           const std::vector<Segment>& still_used, int64_t now_ms, SharedTextUses& uses) {
  for (const Segment& segment : stored.segments) {
    if (!UsesBlob(still_used, segment.blob_id))
      SERAC_RETURN_IF_ERROR(QueueGarbage(db, segment.blob_id, now_ms));
  }
  for (const StoredPiece& piece : stored.pieces) {
    if (piece.shared_id != 0) uses.Release(piece.shared_id);
  }
  return Status::Ok();
}

// The id of a shared piece's bytes, stored now if no object holds them yet; counts one use.
Result<int64_t> UseSharedPiece(PgConnection& db, const Piece& piece, SharedTextUses& uses) {
  // The use count's row is locked: a transaction releasing the text's last use meanwhile either
  // waits for this one (and then finds a use left), or went first and removed it (and then this
  // finds no row and stores the text again).
  SERAC_ASSIGN_OR_RETURN(PgRows found,
                         db.Query("SELECT t.id FROM shared_texts t JOIN shared_text_uses u ON u.id = t.id "
                                  "WHERE t.sha256 = $1 FOR UPDATE OF u",
                                  {PgParam::Bytes(piece.sha256)}));
  if (!found.empty()) {
    uses.Use(found.Int(0, 0));
    return found.Int(0, 0);
  }
  if (!piece.shared || piece.shared->size() != piece.size) {
    return Error(ErrorCode::kInternal, "a new shared piece needs its bytes");
  }
  SERAC_ASSIGN_OR_RETURN(PgRows inserted,
                         db.Query("INSERT INTO shared_texts(sha256, bytes) VALUES ($1, $2) "
                                  "RETURNING id",
                                  {PgParam::Bytes(piece.sha256), PgParam::Bytes(*piece.shared)}));
  const int64_t id = inserted.Int(0, 0);
  SERAC_RETURN_IF_ERROR(
      db.Query("INSERT INTO shared_text_uses(id, uses) VALUES ($1, 0)", {PgParam::Int(id)}).status());
  uses.Use(id);
  return id;
}

// Inserts the row, replacing any row of the same key (whose blobs and texts the caller released).
// `replacing`: the caller holds the existing row's lock; else the plain INSERT collides with a row
// another transaction inserted meanwhile (a unique violation: the engine runs this one again, which
// then finds that row and applies the write's condition to it).
Status WriteObjectRow(PgConnection& db, const ObjectRecord& object, bool replacing, SharedTextUses& uses) {
  SERAC_RETURN_IF_ERROR(ValidateObject(object));
  std::string pieces;
  if (!object.pieces.empty()) {
    StoredPieces stored;
    stored.pieces.reserve(object.pieces.size());
    for (const Piece& piece : object.pieces) {
      StoredPiece& entry = stored.pieces.emplace_back(StoredPiece{piece.size, 0});
      if (!piece.sha256.empty()) {
        SERAC_ASSIGN_OR_RETURN(entry.shared_id, UseSharedPiece(db, piece, uses));
      }
    }
    // Inline stretches stay as they are: PostgreSQL compresses a large value itself.
    pieces = EncodePieces(stored);
  }
  PgParams params = {PgParam::Text(object.bucket),
                     PgParam::Bytes(object.key),
                     PgParam::Int(static_cast<int64_t>(object.size)),
                     PgParam::Text(object.etag),
                     PgParam::Int(object.mtime_ms),
                     PgParam::Int(object.part_count),
                     OptionalText(EncodeHeaders(object.headers)),
                     object.checksum ? PgParam::Text(object.checksum->algorithm) : PgParam::NullText(),
                     object.checksum ? PgParam::Text(object.checksum->value) : PgParam::NullText(),
                     object.checksum ? PgParam::Text(object.checksum->type) : PgParam::NullText(),
                     object.inline_data.empty() ? PgParam::NullBytes() : PgParam::Bytes(object.inline_data),
                     OptionalText(object.segments.empty() ? "" : EncodeSegments(object.segments)),
                     OptionalText(pieces)};
  if (!replacing) {
    return db
        .Query(
            "INSERT INTO objects(bucket, key, size, etag, mtime_ms, part_count, headers, checksum_algorithm, "
            "checksum_value, checksum_type, inline_data, segments, pieces) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            params)
        .status();
  }
  return db
      .Query(
          "UPDATE objects SET size = $3, etag = $4, mtime_ms = $5, part_count = $6, headers = $7, "
          "checksum_algorithm = $8, checksum_value = $9, checksum_type = $10, inline_data = $11, segments = "
          "$12, "
          "pieces = $13 WHERE bucket = $1 AND key = $2",
          params)
      .status();
}

// The bytes of an object written in pieces: its inline pieces taken in order from `inline_data`,
// its shared pieces read from shared_texts (in the caller's snapshot).
Result<std::string> JoinPieces(PgConnection& db, const std::vector<StoredPiece>& pieces,
                               const std::string& inline_data, uint64_t size) {
  std::string bytes;
  bytes.reserve(size);
  size_t inline_used = 0;
  for (const StoredPiece& piece : pieces) {
    if (piece.shared_id == 0) {
      if (piece.size > inline_data.size() - inline_used) {
        return Error(ErrorCode::kInternal, "object pieces need more inline bytes than are stored");
      }
      bytes.append(inline_data, inline_used, piece.size);
      inline_used += piece.size;
      continue;
    }
    SERAC_ASSIGN_OR_RETURN(PgRows shared, db.Query("SELECT bytes FROM shared_texts WHERE id = $1",
                                                   {PgParam::Int(piece.shared_id)}));
    if (shared.empty()) return Error(ErrorCode::kInternal, "object uses a shared text that is not stored");
    std::string text = shared.Text(0, 0);
    if (text.size() != piece.size)
      return Error(ErrorCode::kInternal, "stored shared text has the wrong size");
    bytes += text;
  }
  if (bytes.size() != size) return Error(ErrorCode::kInternal, "object pieces do not add up to its size");
  return bytes;
}

// Replaces whatever is stored under the object's key once `condition` holds.
Status ReplaceLoadedObject(PgConnection& db, const ObjectRecord& object,
                           const std::optional<StoredObject>& stored, const WriteCondition& condition,
                           int64_t now_ms, SharedTextUses& uses) {
  SERAC_RETURN_IF_ERROR(CheckCondition(stored, condition));
  if (stored) SERAC_RETURN_IF_ERROR(CheckNotCatalogMetadata(db, object.bucket, object.key, condition));
  if (stored) SERAC_RETURN_IF_ERROR(ReleaseStoredObject(db, *stored, object.segments, now_ms, uses));
  return WriteObjectRow(db, object, stored.has_value(), uses);
}

Status ReplaceObject(PgConnection& db, const ObjectRecord& object, const WriteCondition& condition,
                     int64_t now_ms, SharedTextUses& uses) {
  SERAC_ASSIGN_OR_RETURN(auto stored, LoadStoredObject(db, object.bucket, object.key));
  return ReplaceLoadedObject(db, object, stored, condition, now_ms, uses);
}

struct UploadKey {
  std::string bucket;
  std::string key;
};

// `for_completion`: the row is locked for update (completing or aborting the upload), else for
// share (a part is added: parts of one upload go in side by side, and a completion waits for them).
Result<std::optional<UploadKey>> LoadUploadKey(PgConnection& db, const std::string& upload_id,
                                               bool for_completion) {
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows, db.Query(for_completion ? "SELECT bucket, key FROM uploads WHERE upload_id = $1 FOR UPDATE"
                                           : "SELECT bucket, key FROM uploads WHERE upload_id = $1 FOR SHARE",
                            {PgParam::Text(upload_id)}));
  if (rows.empty()) return std::optional<UploadKey>();
  return std::optional<UploadKey>(UploadKey{rows.Text(0, 0), rows.Text(0, 1)});
}

Status UploadMissing() { return Error(ErrorCode::kNotFound, "multipart upload does not exist"); }

Result<std::vector<std::string>> LoadPartBlobs(PgConnection& db, const std::string& upload_id) {
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows, db.Query("SELECT blob_id FROM parts WHERE upload_id = $1", {PgParam::Text(upload_id)}));
  std::vector<std::string> blob_ids;
  blob_ids.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row) blob_ids.push_back(rows.Text(row, 0));
  return blob_ids;
}

// Removes the upload and its parts, queueing every part blob `object_segments` does not use.
Status RemoveUpload(PgConnection& db, const std::string& upload_id,
                    const std::vector<Segment>& object_segments, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(std::vector<std::string> part_blobs, LoadPartBlobs(db, upload_id));
  for (const std::string& blob_id : part_blobs) {
    if (!UsesBlob(object_segments, blob_id)) SERAC_RETURN_IF_ERROR(QueueGarbage(db, blob_id, now_ms));
  }
  SERAC_RETURN_IF_ERROR(
      db.Query("DELETE FROM parts WHERE upload_id = $1", {PgParam::Text(upload_id)}).status());
  return db.Query("DELETE FROM uploads WHERE upload_id = $1", {PgParam::Text(upload_id)}).status();
}

Result<bool> HasRows(PgConnection& db, const std::string& sql, const std::string& bucket) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query(sql, {PgParam::Text(bucket)}));
  return !rows.empty();
}

Status RunForBucket(PgConnection& db, const std::string& sql, const std::string& bucket) {
  return db.Query(sql, {PgParam::Text(bucket)}).status();
}

}  // namespace

Result<BucketRecord> GetBucketRead(PgConnection& db, const std::string& name) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows,
                         db.Query("SELECT created_ms FROM buckets WHERE name = $1", {PgParam::Text(name)}));
  if (rows.empty()) return Error(ErrorCode::kNotFound, "bucket does not exist");
  return BucketRecord{name, rows.Int(0, 0)};
}

Result<BucketUsage> GetBucketUsageRead(PgConnection& db, const std::string& bucket) {
  SERAC_RETURN_IF_ERROR(GetBucketRead(db, bucket).status());
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      db.Query("SELECT count(*)::bigint, coalesce(sum(size), 0)::bigint FROM objects WHERE bucket = $1",
               {PgParam::Text(bucket)}));
  if (rows.empty()) return BucketUsage{};
  return BucketUsage{static_cast<uint64_t>(rows.Int(0, 0)), static_cast<uint64_t>(rows.Int(0, 1))};
}

Result<std::vector<BucketRecord>> ListBucketsRead(PgConnection& db) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query("SELECT name, created_ms FROM buckets ORDER BY name"));
  std::vector<BucketRecord> buckets;
  buckets.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row)
    buckets.push_back(BucketRecord{rows.Text(row, 0), rows.Int(row, 1)});
  return buckets;
}

Result<ObjectRecord> GetObjectRead(PgConnection& db, const std::string& bucket, const std::string& key) {
  static const std::string sql = std::string("SELECT ") + kDetailedObjectColumns +
                                 ", inline_data, pieces FROM objects WHERE bucket = $1 AND key = $2";
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query(sql, {PgParam::Text(bucket), PgParam::Bytes(key)}));
  if (rows.empty()) return Error(ErrorCode::kNotFound, "object does not exist");
  ObjectRecord object;
  object.bucket = bucket;
  SERAC_RETURN_IF_ERROR(ReadDetailedObject(rows, 0, object));
  object.inline_data = rows.Text(0, 10);
  if (rows.IsNull(0, 11)) return object;
  if (!db.InTransaction()) {
    // The row and its shared texts must come from one snapshot: a delete committed in between
    // could remove texts the row names. Only objects in pieces pay for the transaction.
    SERAC_RETURN_IF_ERROR(db.Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").status());
    Result<ObjectRecord> read = GetObjectRead(db, bucket, key);
    Status ended = db.Exec(read.ok() ? "COMMIT" : "ROLLBACK").status();
    if (read.ok() && !ended.ok()) return ended;
    return read;
  }
  SERAC_ASSIGN_OR_RETURN(StoredPieces pieces, DecodePieces(rows.Text(0, 11)));
  SERAC_ASSIGN_OR_RETURN(object.inline_data, JoinPieces(db, pieces.pieces, object.inline_data, object.size));
  return object;
}

Result<std::vector<ObjectRecord>> ListObjectsRead(PgConnection& db, const ListObjectsQuery& query) {
  SERAC_RETURN_IF_ERROR(RequireBucket(db, query.bucket));
  std::vector<ObjectRecord> objects;
  if (query.limit == 0) return objects;
  // The tightest lower bound: keys must start with the prefix and follow start_after.
  const bool from_prefix = query.start_after < query.prefix;
  const std::string& lower = from_prefix ? query.prefix : query.start_after;
  std::optional<std::string> upper = PrefixSuccessor(query.prefix);
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query(ListObjectsSql(query.with_details, from_prefix),
                                               {PgParam::Text(query.bucket), PgParam::Bytes(lower),
                                                upper ? PgParam::Bytes(*upper) : PgParam::NullBytes(),
                                                PgParam::Int(query.limit)}));
  objects.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row) {
    ObjectRecord& object = objects.emplace_back();
    object.bucket = query.bucket;
    if (query.with_details) {
      SERAC_RETURN_IF_ERROR(ReadDetailedObject(rows, row, object));
    } else {
      ReadBriefObject(rows, row, object);
    }
  }
  return objects;
}

Result<UploadRecord> GetUploadRead(PgConnection& db, const std::string& bucket, const std::string& key,
                                   const std::string& upload_id) {
  static const std::string sql = std::string("SELECT ") + kUploadColumns +
                                 " FROM uploads WHERE upload_id = $1 AND bucket = $2 AND key = $3";
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows, db.Query(sql, {PgParam::Text(upload_id), PgParam::Text(bucket), PgParam::Bytes(key)}));
  if (rows.empty()) return Error(ErrorCode::kNotFound, "multipart upload does not exist");
  return ReadUpload(rows, 0);
}

Result<std::vector<PartRecord>> ListPartsRead(PgConnection& db, const std::string& upload_id,
                                              uint32_t part_number_marker, uint32_t limit) {
  SERAC_RETURN_IF_ERROR(RequireUpload(db, upload_id));
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      db.Query("SELECT part_number, size, etag, mtime_ms, blob_id, checksum_value "
               "FROM parts WHERE upload_id = $1 AND part_number > $2 "
               "ORDER BY part_number LIMIT $3",
               {PgParam::Text(upload_id), PgParam::Int(part_number_marker), PgParam::Int(limit)}));
  std::vector<PartRecord> parts;
  parts.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row) {
    parts.push_back(PartRecord{static_cast<uint32_t>(rows.Int(row, 0)),
                               static_cast<uint64_t>(rows.Int(row, 1)), rows.Text(row, 2), rows.Int(row, 3),
                               rows.Text(row, 4), rows.Text(row, 5)});
  }
  return parts;
}

Result<std::vector<UploadRecord>> ListUploadsRead(PgConnection& db, const ListUploadsQuery& query) {
  SERAC_RETURN_IF_ERROR(RequireBucket(db, query.bucket));
  std::optional<std::string> upper = PrefixSuccessor(query.prefix);
  const bool has_id_marker = !query.upload_id_marker.empty();
  std::string sql = std::string("SELECT ") + kUploadColumns +
                    " FROM uploads WHERE bucket = $1 AND key >= $2 AND ($3::bytea IS NULL OR key < $3)";
  sql += has_id_marker ? " AND (key > $4 OR (key = $4 AND upload_id > $5))"
                       : " AND key > $4 AND $5::text IS NULL";
  sql += " ORDER BY key, upload_id LIMIT $6";
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      db.Query(sql, {PgParam::Text(query.bucket), PgParam::Bytes(query.prefix),
                     upper ? PgParam::Bytes(*upper) : PgParam::NullBytes(), PgParam::Bytes(query.key_marker),
                     has_id_marker ? PgParam::Text(query.upload_id_marker) : PgParam::NullText(),
                     PgParam::Int(query.limit)}));
  std::vector<UploadRecord> uploads;
  uploads.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row) {
    SERAC_ASSIGN_OR_RETURN(UploadRecord upload, ReadUpload(rows, row));
    uploads.push_back(std::move(upload));
  }
  return uploads;
}

Result<std::vector<std::string>> PeekGarbageRead(PgConnection& db, uint32_t limit) {
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      db.Query("SELECT blob_id FROM gc_queue ORDER BY queued_ms, blob_id LIMIT $1", {PgParam::Int(limit)}));
  std::vector<std::string> blob_ids;
  blob_ids.reserve(static_cast<size_t>(rows.size()));
  for (int row = 0; row < rows.size(); ++row) blob_ids.push_back(rows.Text(row, 0));
  return blob_ids;
}

Status ForEachReferencedBlobRead(PgConnection& db, const std::function<Status(const std::string&)>& visit) {
  // Page by key so that a store of millions of objects is never held in memory at once.
  constexpr int64_t kPage = 10000;
  std::string after_bucket;
  std::string after_key;
  for (bool first = true;; first = false) {
    SERAC_ASSIGN_OR_RETURN(
        PgRows rows, db.Query("SELECT bucket, key, segments FROM objects WHERE segments IS NOT NULL AND "
                              "($1 OR (bucket, key) > ($2, $3)) ORDER BY bucket, key LIMIT $4",
                              {PgParam::Bool(first), PgParam::Text(after_bucket), PgParam::Bytes(after_key),
                               PgParam::Int(kPage)}));
    for (int row = 0; row < rows.size(); ++row) {
      SERAC_ASSIGN_OR_RETURN(std::vector<Segment> segments, DecodeSegments(rows.Text(row, 2)));
      for (const Segment& segment : segments) SERAC_RETURN_IF_ERROR(visit(segment.blob_id));
    }
    if (rows.size() < kPage) break;
    after_bucket = rows.Text(rows.size() - 1, 0);
    after_key = rows.Text(rows.size() - 1, 1);
  }
  SERAC_ASSIGN_OR_RETURN(PgRows parts, db.Query("SELECT blob_id FROM parts"));
  for (int row = 0; row < parts.size(); ++row) SERAC_RETURN_IF_ERROR(visit(parts.Text(row, 0)));
  return Status::Ok();
}

Status CreateBucketTx(PgConnection& db, const BucketRecord& bucket) {
  SERAC_ASSIGN_OR_RETURN(PgRows rows,
                         db.Query("INSERT INTO buckets(name, created_ms) VALUES ($1, $2) "
                                  "ON CONFLICT DO NOTHING",
                                  {PgParam::Text(bucket.name), PgParam::Int(bucket.created_ms)}));
  if (rows.affected() == 0) return Error(ErrorCode::kAlreadyExists, "bucket already exists");
  return Status::Ok();
}

Status DeleteBucketTx(PgConnection& db, const std::string& name) {
  SERAC_RETURN_IF_ERROR(RequireBucket(db, name));
  SERAC_ASSIGN_OR_RETURN(bool is_warehouse, IsWarehouse(db, name));
  if (is_warehouse) {
    return Error(ErrorCode::kConflict,
                 "The bucket is an Iceberg warehouse; remove it with the warehouse API");
  }
  SERAC_ASSIGN_OR_RETURN(bool has_objects,
                         HasRows(db, "SELECT 1 FROM objects WHERE bucket = $1 LIMIT 1", name));
  SERAC_ASSIGN_OR_RETURN(bool has_uploads,
                         HasRows(db, "SELECT 1 FROM uploads WHERE bucket = $1 LIMIT 1", name));
  if (has_objects || has_uploads) {
    return Error(ErrorCode::kNotEmpty, "bucket still holds objects or multipart uploads");
  }
  return RunForBucket(db, "DELETE FROM buckets WHERE name = $1", name);
}

Status PurgeBucketTx(PgConnection& db, const std::string& name, int64_t now_ms) {
  SERAC_RETURN_IF_ERROR(RequireBucket(db, name));
  // Every blob of the bucket's objects and parts goes to the queue in one statement each.
  SERAC_RETURN_IF_ERROR(
      db.Query("INSERT INTO gc_queue(blob_id, queued_ms) SELECT segment->>0, $2 FROM objects, "
               "jsonb_array_elements(segments::jsonb) AS segment WHERE bucket = $1 AND segments IS NOT NULL "
               "ON CONFLICT DO NOTHING",
               {PgParam::Text(name), PgParam::Int(now_ms)})
          .status());
  SERAC_ASSIGN_OR_RETURN(PgRows with_pieces, db.Query("SELECT pieces FROM objects WHERE bucket = $1 AND "
                                                      "pieces IS NOT NULL",
                                                      {PgParam::Text(name)}));
  SharedTextUses uses;
  for (int row = 0; row < with_pieces.size(); ++row) {
    SERAC_ASSIGN_OR_RETURN(StoredPieces pieces, DecodePieces(with_pieces.Text(row, 0)));
    for (const StoredPiece& piece : pieces.pieces) {
      if (piece.shared_id != 0) uses.Release(piece.shared_id);
    }
  }
  SERAC_RETURN_IF_ERROR(RunForBucket(db, "DELETE FROM objects WHERE bucket = $1", name));
  SERAC_RETURN_IF_ERROR(uses.Apply(db));
  SERAC_RETURN_IF_ERROR(db.Query("INSERT INTO gc_queue(blob_id, queued_ms) SELECT blob_id, $2 FROM parts "
                                 "WHERE upload_id IN (SELECT upload_id FROM uploads WHERE bucket = $1) "
                                 "ON CONFLICT DO NOTHING",
                                 {PgParam::Text(name), PgParam::Int(now_ms)})
                            .status());
  SERAC_RETURN_IF_ERROR(RunForBucket(
      db, "DELETE FROM parts WHERE upload_id IN (SELECT upload_id FROM uploads WHERE bucket = $1)", name));
  SERAC_RETURN_IF_ERROR(RunForBucket(db, "DELETE FROM uploads WHERE bucket = $1", name));
  return RunForBucket(db, "DELETE FROM buckets WHERE name = $1", name);
}

Status SharedTextUses::Apply(PgConnection& db) {
  // Two statements whatever the number of texts: the counts moved all at once from two arrays,
  // then the texts left without uses removed.
  std::string ids;
  std::string deltas;
  for (const auto& [id, delta] : changes_) {
    if (delta == 0) continue;
    ids += (ids.empty() ? "{" : ",") + std::to_string(id);
    deltas += (deltas.empty() ? "{" : ",") + std::to_string(delta);
  }
  changes_.clear();
  if (ids.empty()) return Status::Ok();
  ids += "}";
  deltas += "}";
  SERAC_ASSIGN_OR_RETURN(
      PgRows moved,
      db.Query("UPDATE shared_text_uses AS u SET uses = u.uses + d.delta "
               "FROM unnest($1::text::bigint[], $2::text::bigint[]) AS d(id, delta) WHERE u.id = d.id "
               "RETURNING u.id, u.uses",
               {PgParam::Text(ids), PgParam::Text(deltas)}));
  // Every text counted must still be there: the rows of texts this write uses are locked, and
  // those it releases belong to objects whose rows it holds.
  if (moved.size() != static_cast<int>(std::count(ids.begin(), ids.end(), ',') + 1)) {
    db.MarkLostRace();
    return Error(ErrorCode::kConflict, "a shared text's use count changed under this write");
  }
  std::string unused;
  for (int row = 0; row < moved.size(); ++row) {
    if (moved.Int(row, 1) < 0) {
      return Error(ErrorCode::kInternal, "a shared text is released more often than it is used");
    }
    if (moved.Int(row, 1) == 0) unused += (unused.empty() ? "{" : ",") + std::to_string(moved.Int(row, 0));
  }
  if (unused.empty()) return Status::Ok();
  unused += "}";
  SERAC_RETURN_IF_ERROR(
      db.Query("DELETE FROM shared_texts WHERE id = ANY($1::text::bigint[])", {PgParam::Text(unused)})
          .status());
  return db.Query("DELETE FROM shared_text_uses WHERE id = ANY($1::text::bigint[])", {PgParam::Text(unused)})
      .status();
}

Status PutObjectTx(PgConnection& db, const ObjectRecord& object, const WriteCondition& condition,
                   int64_t now_ms, SharedTextUses& uses) {
  SERAC_ASSIGN_OR_RETURN(auto stored, LoadStoredObject(db, object.bucket, object.key));
  // An object's row names its bucket (a foreign key): only a new key needs the bucket looked up,
  // which saves an overwrite one statement.
  if (!stored) SERAC_RETURN_IF_ERROR(RequireBucket(db, object.bucket));
  return ReplaceLoadedObject(db, object, stored, condition, now_ms, uses);
}

Status PutObjectTx(PgConnection& db, const ObjectRecord& object, const WriteCondition& condition,
                   int64_t now_ms) {
  SharedTextUses uses;
  SERAC_RETURN_IF_ERROR(PutObjectTx(db, object, condition, now_ms, uses));
  return uses.Apply(db);
}

Status SetObjectTagsTx(PgConnection& db, const std::string& bucket, const std::string& key,
                       const std::vector<std::pair<std::string, std::string>>& tags,
                       const WriteCondition& condition) {
  SERAC_ASSIGN_OR_RETURN(auto stored, LoadStoredObject(db, bucket, key));
  if (!stored) {
    SERAC_RETURN_IF_ERROR(RequireBucket(db, bucket));
    return Error(ErrorCode::kNotFound, "object does not exist");
  }
  SERAC_RETURN_IF_ERROR(CheckCondition(stored, condition));
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query("SELECT headers FROM objects WHERE bucket = $1 AND key = $2",
                                               {PgParam::Text(bucket), PgParam::Bytes(key)}));
  if (rows.empty()) return Error(ErrorCode::kInternal, "object row vanished inside its transaction");
  ObjectHeaders headers;
  if (!rows.IsNull(0, 0)) {
    SERAC_ASSIGN_OR_RETURN(headers, DecodeHeaders(rows.Text(0, 0)));
  }
  headers.tags = tags;
  return db
      .Query("UPDATE objects SET headers = $1 WHERE bucket = $2 AND key = $3",
             {OptionalText(EncodeHeaders(headers)), PgParam::Text(bucket), PgParam::Bytes(key)})
      .status();
}

Status DeleteObjectTx(PgConnection& db, const std::string& bucket, const std::string& key,
                      const WriteCondition& condition, int64_t now_ms, SharedTextUses& uses) {
  SERAC_ASSIGN_OR_RETURN(auto stored, LoadStoredObject(db, bucket, key));
  SERAC_RETURN_IF_ERROR(CheckCondition(stored, condition));
  if (!stored) return RequireBucket(db, bucket);
  SERAC_RETURN_IF_ERROR(CheckNotCatalogMetadata(db, bucket, key, condition));
  SERAC_RETURN_IF_ERROR(ReleaseStoredObject(db, *stored, {}, now_ms, uses));
  return db
      .Query("DELETE FROM objects WHERE bucket = $1 AND key = $2",
             {PgParam::Text(bucket), PgParam::Bytes(key)})
      .status();
}

Status DeleteObjectTx(PgConnection& db, const std::string& bucket, const std::string& key,
                      const WriteCondition& condition, int64_t now_ms) {
  SharedTextUses uses;
  SERAC_RETURN_IF_ERROR(DeleteObjectTx(db, bucket, key, condition, now_ms, uses));
  return uses.Apply(db);
}

Status CreateUploadTx(PgConnection& db, const UploadRecord& upload) {
  SERAC_RETURN_IF_ERROR(RequireBucket(db, upload.bucket));
  SERAC_ASSIGN_OR_RETURN(
      PgRows rows,
      db.Query("INSERT INTO uploads(upload_id, bucket, key, initiated_ms, headers, checksum_algorithm, "
               "checksum_type) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
               {PgParam::Text(upload.upload_id), PgParam::Text(upload.bucket), PgParam::Bytes(upload.key),
                PgParam::Int(upload.initiated_ms), OptionalText(EncodeHeaders(upload.headers)),
                PgParam::Text(upload.checksum_algorithm), PgParam::Text(upload.checksum_type)}));
  if (rows.affected() == 0) return Error(ErrorCode::kAlreadyExists, "upload id already in use");
  return Status::Ok();
}

Status PutPartTx(PgConnection& db, const std::string& upload_id, const PartRecord& part, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(auto upload, LoadUploadKey(db, upload_id, false));
  if (!upload) return UploadMissing();
  // A part sent again replaces the row it locks here; a first one is a plain INSERT, which collides
  // with one sent at the same moment (a unique violation: run again, it replaces that one).
  SERAC_ASSIGN_OR_RETURN(
      PgRows old, db.Query("SELECT blob_id FROM parts WHERE upload_id = $1 AND part_number = $2 FOR UPDATE",
                           {PgParam::Text(upload_id), PgParam::Int(part.part_number)}));
  const PgParams params = {PgParam::Text(upload_id),
                           PgParam::Int(part.part_number),
                           PgParam::Int(static_cast<int64_t>(part.size)),
                           PgParam::Text(part.etag),
                           PgParam::Int(part.mtime_ms),
                           PgParam::Text(part.blob_id),
                           PgParam::Text(part.checksum_value)};
  if (old.empty()) {
    return db
        .Query(
            "INSERT INTO parts(upload_id, part_number, size, etag, mtime_ms, blob_id, checksum_value) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7)",
            params)
        .status();
  }
  if (old.Text(0, 0) != part.blob_id) SERAC_RETURN_IF_ERROR(QueueGarbage(db, old.Text(0, 0), now_ms));
  return db
      .Query(
          "UPDATE parts SET size = $3, etag = $4, mtime_ms = $5, blob_id = $6, checksum_value = $7 "
          "WHERE upload_id = $1 AND part_number = $2",
          params)
      .status();
}

Status CompleteUploadTx(PgConnection& db, const std::string& upload_id, const ObjectRecord& object,
                        const WriteCondition& condition, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(auto upload, LoadUploadKey(db, upload_id, true));
  if (!upload || upload->bucket != object.bucket || upload->key != object.key) return UploadMissing();
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
  SERAC_RETURN_IF_ERROR(ReplaceObject(db, object, condition, now_ms, uses));
  SERAC_RETURN_IF_ERROR(uses.Apply(db));
  return RemoveUpload(db, upload_id, object.segments, now_ms);
}

Status AbortUploadTx(PgConnection& db, const std::string& bucket, const std::string& key,
                     const std::string& upload_id, int64_t now_ms) {
  SERAC_ASSIGN_OR_RETURN(auto upload, LoadUploadKey(db, upload_id, true));
  if (!upload || upload->bucket != bucket || upload->key != key) return UploadMissing();
  return RemoveUpload(db, upload_id, {}, now_ms);
}

Status ForgetGarbageTx(PgConnection& db, const std::vector<std::string>& blob_ids) {
  for (const std::string& blob_id : blob_ids) {
    SERAC_RETURN_IF_ERROR(
        db.Query("DELETE FROM gc_queue WHERE blob_id = $1", {PgParam::Text(blob_id)}).status());
  }
  return Status::Ok();
}

}  // namespace serac::meta::postgres
