#include <utility>

#include "common/zstd.h"
#include "meta/meta_records_internal.h"
#include "meta/sqlite/sqlite_reads_internal.h"

namespace serac::meta::sqlite {
namespace {

// Columns of a listing row; the detailed form adds the rest of the record except inline bytes,
// which only GetObject returns (a page of listings must not drag along 64 KiB per key).
constexpr const char* kBriefObjectColumns = "key, size, etag, mtime_ms";
constexpr const char* kDetailedObjectColumns =
    "key, size, etag, mtime_ms, part_count, headers, checksum_algorithm, checksum_value, "
    "checksum_type, segments";

void ReadBriefObject(const Statement& row, ObjectRecord& object) {
  object.key = row.Blob(0);
  object.size = static_cast<uint64_t>(row.Int(1));
  object.etag = row.Text(2);
  object.mtime_ms = row.Int(3);
}

Status ReadDetailedObject(const Statement& row, ObjectRecord& object) {
  ReadBriefObject(row, object);
  object.part_count = static_cast<uint32_t>(row.Int(4));
  SERAC_ASSIGN_OR_RETURN(object.headers, DecodeHeaders(row.Text(5)));
  if (!row.IsNull(6)) object.checksum = ChecksumRecord{row.Text(6), row.Text(7), row.Text(8)};
  SERAC_ASSIGN_OR_RETURN(object.segments, DecodeSegments(row.Text(9)));
  return Status::Ok();
}

Status RequireBucket(Connection& db, const std::string& bucket) { return GetBucketRead(db, bucket).status(); }

// The bytes of an object written in pieces: its inline pieces taken in order from `inline_data`,
// its shared pieces read from shared_texts.
Result<std::string> JoinPieces(Connection& db, const std::vector<StoredPiece>& pieces,
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
    SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT bytes FROM shared_texts WHERE id = ?1;"));
    SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindInt(1, piece.shared_id).Step());
    if (!found) return Error(ErrorCode::kInternal, "object uses a shared text that is not stored");
    std::string shared = stmt->Blob(0);
    if (shared.size() != piece.size)
      return Error(ErrorCode::kInternal, "stored shared text has the wrong size");
    bytes += shared;
  }
  if (bytes.size() != size) return Error(ErrorCode::kInternal, "object pieces do not add up to its size");
  return bytes;
}

Status RequireUpload(Connection& db, const std::string& upload_id) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT 1 FROM uploads WHERE upload_id = ?1;"));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, upload_id).Step());
  if (!found) return Error(ErrorCode::kNotFound, "multipart upload does not exist");
  return Status::Ok();
}

// The tightest lower bound of a listing: keys must start with `prefix` and follow `start_after`.
struct LowerBound {
  std::string key;
  bool inclusive;
};

LowerBound ListingLowerBound(const std::string& prefix, const std::string& start_after) {
  if (start_after < prefix) return LowerBound{prefix, true};
  return LowerBound{start_after, false};
}

UploadRecord ReadUploadColumns(const Statement& row, Status& status) {
  // Columns: upload_id, bucket, key, initiated_ms, headers, checksum_algorithm, checksum_type.
  UploadRecord upload;
  upload.upload_id = row.Text(0);
  upload.bucket = row.Text(1);
  upload.key = row.Blob(2);
  upload.initiated_ms = row.Int(3);
  Result<ObjectHeaders> headers = DecodeHeaders(row.Text(4));
  if (headers.ok()) {
    upload.headers = std::move(headers).value();
  } else {
    status = headers.status();
  }
  upload.checksum_algorithm = row.Text(5);
  upload.checksum_type = row.Text(6);
  return upload;
}

constexpr const char* kUploadColumns =
    "upload_id, bucket, key, initiated_ms, headers, checksum_algorithm, checksum_type";

std::string ListUploadsSql(bool has_upper, bool has_upload_id_marker) {
  std::string sql = "SELECT ";
  sql += kUploadColumns;
  sql += " FROM uploads WHERE bucket = ?1 AND key >= ?2";
  if (has_upper) sql += " AND key < ?3";
  sql += has_upload_id_marker ? " AND (key > ?4 OR (key = ?4 AND upload_id > ?5))" : " AND key > ?4";
  sql += " ORDER BY key, upload_id LIMIT ?6;";
  return sql;
}

}  // namespace

std::optional<std::string> PrefixSuccessor(const std::string& prefix) {
  std::string successor = prefix;
  while (!successor.empty() && static_cast<unsigned char>(successor.back()) == 0xFF) {
    successor.pop_back();
  }
  if (successor.empty()) return std::nullopt;
  successor.back() = static_cast<char>(static_cast<unsigned char>(successor.back()) + 1);
  return successor;
}

std::string ListObjectsSql(bool with_details, bool lower_inclusive, bool has_upper) {
  std::string sql = "SELECT ";
  sql += with_details ? kDetailedObjectColumns : kBriefObjectColumns;
  sql += " FROM objects WHERE bucket = ?1 AND key ";
  sql += lower_inclusive ? ">= ?2" : "> ?2";
  if (has_upper) sql += " AND key < ?3";
  sql += " ORDER BY key LIMIT ?4;";
  return sql;
}

Result<BucketRecord> GetBucketRead(Connection& db, const std::string& name) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT created_ms FROM buckets WHERE name = ?1;"));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, name).Step());
  if (!found) return Error(ErrorCode::kNotFound, "bucket does not exist");
  return BucketRecord{name, stmt->Int(0)};
}

Result<BucketUsage> GetBucketUsageRead(Connection& db, const std::string& bucket) {
  SERAC_RETURN_IF_ERROR(GetBucketRead(db, bucket).status());
  SERAC_ASSIGN_OR_RETURN(
      auto stmt, db.Prepare("SELECT count(*), coalesce(sum(size), 0) FROM objects WHERE bucket = ?1;"));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, bucket).Step());
  if (!found) return BucketUsage{};
  return BucketUsage{static_cast<uint64_t>(stmt->Int(0)), static_cast<uint64_t>(stmt->Int(1))};
}

Result<std::vector<BucketRecord>> ListBucketsRead(Connection& db) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT name, created_ms FROM buckets ORDER BY name;"));
  std::vector<BucketRecord> buckets;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return buckets;
    buckets.push_back(BucketRecord{stmt->Text(0), stmt->Int(1)});
  }
}

Result<ObjectRecord> GetObjectRead(Connection& db, const std::string& bucket, const std::string& key) {
  std::string sql = std::string("SELECT ") + kDetailedObjectColumns +
                    ", (SELECT data FROM inline_data WHERE id = objects.inline_id), pieces "
                    "FROM objects WHERE bucket = ?1 AND key = ?2;";
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
  SERAC_ASSIGN_OR_RETURN(bool found, stmt->BindText(1, bucket).BindBlob(2, key).Step());
  if (!found) return Error(ErrorCode::kNotFound, "object does not exist");
  ObjectRecord object;
  object.bucket = bucket;
  SERAC_RETURN_IF_ERROR(ReadDetailedObject(*stmt, object));
  object.inline_data = stmt->Blob(10);
  if (stmt->IsNull(11)) return object;
  SERAC_ASSIGN_OR_RETURN(StoredPieces pieces, DecodePieces(stmt->Text(11)));
  stmt->Reset();
  if (!db.InTransaction()) {
    // The row and its shared texts must come from one snapshot: a delete committed in between
    // could remove texts the row names. Only objects in pieces pay for the transaction.
    return RunInReadTransaction<ObjectRecord>(
        db, [&](Connection& snapshot) { return GetObjectRead(snapshot, bucket, key); });
  }
  if (pieces.inline_encoding == InlineEncoding::kZstd) {
    uint64_t inline_size = 0;
    for (const StoredPiece& piece : pieces.pieces) inline_size += piece.shared_id == 0 ? piece.size : 0;
    SERAC_ASSIGN_OR_RETURN(object.inline_data, zstd::Decompress(object.inline_data, inline_size));
  }
  SERAC_ASSIGN_OR_RETURN(object.inline_data, JoinPieces(db, pieces.pieces, object.inline_data, object.size));
  return object;
}

Result<std::vector<ObjectRecord>> ListObjectsRead(Connection& db, const ListObjectsQuery& query) {
  SERAC_RETURN_IF_ERROR(RequireBucket(db, query.bucket));
  std::vector<ObjectRecord> objects;
  if (query.limit == 0) return objects;
  LowerBound lower = ListingLowerBound(query.prefix, query.start_after);
  std::optional<std::string> upper = PrefixSuccessor(query.prefix);
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare(ListObjectsSql(query.with_details, lower.inclusive, upper.has_value())));
  stmt->BindText(1, query.bucket).BindBlob(2, lower.key).BindInt(4, query.limit);
  if (upper) stmt->BindBlob(3, *upper);
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return objects;
    ObjectRecord& object = objects.emplace_back();
    object.bucket = query.bucket;
    if (query.with_details) {
      SERAC_RETURN_IF_ERROR(ReadDetailedObject(*stmt, object));
    } else {
      ReadBriefObject(*stmt, object);
    }
  }
}

Result<UploadRecord> GetUploadRead(Connection& db, const std::string& bucket, const std::string& key,
                                   const std::string& upload_id) {
  std::string sql = std::string("SELECT ") + kUploadColumns +
                    " FROM uploads WHERE upload_id = ?1 AND bucket = ?2 AND key = ?3;";
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(sql));
  SERAC_ASSIGN_OR_RETURN(bool found,
                         stmt->BindText(1, upload_id).BindText(2, bucket).BindBlob(3, key).Step());
  if (!found) return Error(ErrorCode::kNotFound, "multipart upload does not exist");
  Status status;
  UploadRecord upload = ReadUploadColumns(*stmt, status);
  if (!status.ok()) return status;
  return upload;
}

Result<std::vector<PartRecord>> ListPartsRead(Connection& db, const std::string& upload_id,
                                              uint32_t part_number_marker, uint32_t limit) {
  SERAC_RETURN_IF_ERROR(RequireUpload(db, upload_id));
  SERAC_ASSIGN_OR_RETURN(auto stmt,
                         db.Prepare("SELECT part_number, size, etag, mtime_ms, blob_id, checksum_value "
                                    "FROM parts WHERE upload_id = ?1 AND part_number > ?2 "
                                    "ORDER BY part_number LIMIT ?3;"));
  stmt->BindText(1, upload_id).BindInt(2, part_number_marker).BindInt(3, limit);
  std::vector<PartRecord> parts;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return parts;
    parts.push_back(PartRecord{static_cast<uint32_t>(stmt->Int(0)), static_cast<uint64_t>(stmt->Int(1)),
                               stmt->Text(2), stmt->Int(3), stmt->Text(4), stmt->Text(5)});
  }
}

Result<std::vector<UploadRecord>> ListUploadsRead(Connection& db, const ListUploadsQuery& query) {
  SERAC_RETURN_IF_ERROR(RequireBucket(db, query.bucket));
  std::optional<std::string> upper = PrefixSuccessor(query.prefix);
  bool has_id_marker = !query.upload_id_marker.empty();
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare(ListUploadsSql(upper.has_value(), has_id_marker)));
  stmt->BindText(1, query.bucket).BindBlob(2, query.prefix).BindBlob(4, query.key_marker);
  if (upper) stmt->BindBlob(3, *upper);
  if (has_id_marker) stmt->BindText(5, query.upload_id_marker);
  stmt->BindInt(6, query.limit);
  std::vector<UploadRecord> uploads;
  Status status;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return uploads;
    uploads.push_back(ReadUploadColumns(*stmt, status));
    if (!status.ok()) return status;
  }
}

Result<std::vector<std::string>> PeekGarbageRead(Connection& db, uint32_t limit) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("SELECT blob_id FROM gc_queue "
                                               "ORDER BY queued_ms, blob_id LIMIT ?1;"));
  stmt->BindInt(1, limit);
  std::vector<std::string> blob_ids;
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
    if (!row) return blob_ids;
    blob_ids.push_back(stmt->Text(0));
  }
}

Status ForEachReferencedBlobRead(Connection& db, const std::function<Status(const std::string&)>& visit) {
  SERAC_ASSIGN_OR_RETURN(auto objects,
                         db.Prepare("SELECT segments FROM objects WHERE segments IS NOT NULL;"));
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, objects->Step());
    if (!row) break;
    SERAC_ASSIGN_OR_RETURN(std::vector<Segment> segments, DecodeSegments(objects->Text(0)));
    for (const Segment& segment : segments) SERAC_RETURN_IF_ERROR(visit(segment.blob_id));
  }
  SERAC_ASSIGN_OR_RETURN(auto parts, db.Prepare("SELECT blob_id FROM parts;"));
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool row, parts->Step());
    if (!row) return Status::Ok();
    SERAC_RETURN_IF_ERROR(visit(parts->Text(0)));
  }
}

}  // namespace serac::meta::sqlite
