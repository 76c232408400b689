// Metadata files as objects in the warehouse bucket: written once (If-None-Match: *), read back
// through the object index so S3 clients and the catalog see the same bytes, parsed once per
// location and cached (a metadata file never changes).
#include <set>

#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_metadata_io_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "common/clock.h"
#include "common/encoding.h"
#include "common/hash.h"
#include "common/limits.h"
#include "common/log.h"
#include "maintenance/remove_unreferenced_files.h"
#include "meta/catalog_locations.h"
#include "objects/object_io.h"

namespace serac::catalog {
namespace {

Result<S3Location> RequireS3Location(const std::string& location) {
  auto parsed = ParseS3Location(location);
  if (!parsed || parsed->key.empty()) {
    return Error(ErrorCode::kInvalidArgument, "not an s3:// object location: " + location);
  }
  return *parsed;
}

// The index record of a new metadata file of `size` bytes at `location`, still without its bytes
// and ETag.
Result<meta::ObjectRecord> NewMetadataFileRecord(const std::string& location, uint64_t size) {
  SERAC_ASSIGN_OR_RETURN(S3Location target, RequireS3Location(location));
  meta::ObjectRecord record;
  record.bucket = target.bucket;
  record.key = target.key;
  record.size = size;
  record.mtime_ms = ToUnixMillis(Now());
  record.headers.content_type = "application/json";
  return record;
}

std::string HexOf(const Md5Digest& md5) {
  return HexEncode(std::string_view(reinterpret_cast<const char*>(md5.data()), md5.size()));
}

}  // namespace

Result<meta::ObjectRecord> MetadataFileRecord(Backend& backend, const std::string& location,
                                              const std::string& json) {
  SERAC_ASSIGN_OR_RETURN(meta::ObjectRecord record, NewMetadataFileRecord(location, json.size()));
  record.etag = HexOf(Md5(json));
  // Metadata files stay in the index row up to a larger size than S3 objects: a commit then
  // costs one durable write instead of a blob, its directory and the index.
  objects::ObjectBodyWriter body(*backend.blobs, limits::kCatalogInlineMetadataBytesMax);
  SERAC_RETURN_IF_ERROR(body.Append(json));
  SERAC_RETURN_IF_ERROR(body.Finish(record));
  return record;
}

Result<meta::ObjectRecord> TableMetadataFileRecord(Backend& backend, const std::string& location,
                                                   const std::vector<iceberg::MetadataTextPiece>& pieces) {
  uint64_t size = 0;
  uint64_t inline_bytes = 0;
  for (const iceberg::MetadataTextPiece& piece : pieces) {
    size += piece.size();
    if (!piece.chunk) inline_bytes += piece.size();
  }
  // Never a file serac would refuse to read, nor one whose every next commit rewrites more than
  // its limit: the shared history is all that may grow past it.
  if (size > limits::kCatalogMetadataFileBytesMax) {
    return Error(ErrorCode::kLimitExceeded, "the table's metadata would be " + std::to_string(size) +
                                                " bytes, more than limits::kCatalogMetadataFileBytesMax (" +
                                                std::to_string(limits::kCatalogMetadataFileBytesMax) +
                                                " bytes)");
  }
  if (inline_bytes > limits::kIcebergMetadataRewrittenBytesMax) {
    return Error(ErrorCode::kLimitExceeded,
                 "the table's metadata besides its history would be " + std::to_string(inline_bytes) +
                     " bytes, more than limits::kIcebergMetadataRewrittenBytesMax (" +
                     std::to_string(limits::kIcebergMetadataRewrittenBytesMax) + " bytes)");
  }
  if (inline_bytes == size || inline_bytes > limits::kCatalogInlineMetadataBytesMax) {
    return MetadataFileRecord(backend, location, iceberg::JoinMetadataPieces(pieces));
  }
  SERAC_ASSIGN_OR_RETURN(meta::ObjectRecord record, NewMetadataFileRecord(location, size));
  record.inline_data.reserve(inline_bytes);
  std::string piece_md5s;
  piece_md5s.reserve(pieces.size() * 16);
  for (const iceberg::MetadataTextPiece& piece : pieces) {
    meta::Piece& stored = record.pieces.emplace_back();
    stored.size = piece.size();
    if (piece.chunk) {
      stored.sha256 = piece.chunk->sha256;
      // Shares the chunk's ownership: the bytes are not copied.
      stored.shared = std::shared_ptr<const std::string>(piece.chunk, &piece.chunk->text);
      piece_md5s += piece.chunk->md5;
    } else {
      record.inline_data += piece.text;
      const Md5Digest md5 = Md5(piece.text);
      piece_md5s.append(reinterpret_cast<const char*>(md5.data()), md5.size());
    }
  }
  record.etag = HexOf(Md5(piece_md5s)) + "-" + std::to_string(pieces.size());
  return record;
}

void DiscardMetadataFileRecord(Backend& backend, const meta::ObjectRecord& record) {
  objects::DiscardBlobs(*backend.blobs, record.segments);
}

Status WriteMetadataFile(Backend& backend, const std::string& location, const std::string& json) {
  SERAC_ASSIGN_OR_RETURN(meta::ObjectRecord record, MetadataFileRecord(backend, location, json));
  meta::WriteCondition never_overwrite;
  never_overwrite.if_none_match_any = true;
  return objects::CommitObject(*backend.meta, *backend.blobs, record, never_overwrite);
}

void DeleteMetadataFileQuietly(Backend& backend, const std::string& location) {
  auto target = ParseS3Location(location);
  if (!target || target->key.empty()) return;
  Status deleted = backend.meta->DeleteObject(target->bucket, target->key, {});
  if (!deleted.ok())
    log::Warn("catalog: could not delete metadata file " + location + ": " + deleted.ToString());
}

Result<std::string> ReadMetadataFile(Backend& backend, const std::string& location) {
  SERAC_ASSIGN_OR_RETURN(S3Location target, RequireS3Location(location));
  auto object = backend.meta->GetObject(target.bucket, target.key);
  if (!object.ok()) {
    if (object.status().code() == ErrorCode::kNotFound) {
      return Error(ErrorCode::kNotFound, "metadata file does not exist: " + location);
    }
    return object.status();
  }
  if (object->size > limits::kCatalogMetadataFileBytesMax) {
    return Error(ErrorCode::kLimitExceeded,
                 "metadata file exceeds limits::kCatalogMetadataFileBytesMax (64 MiB): " + location);
  }
  return objects::ReadObjectBytes(*backend.blobs, std::move(object).value());
}

Result<std::shared_ptr<const iceberg::TableMetadata>> LoadTableMetadata(Backend& backend,
                                                                        const std::string& location) {
  if (auto cached = backend.tables.Get(location)) return cached;
  SERAC_ASSIGN_OR_RETURN(std::string text, ReadMetadataFile(backend, location));
  SERAC_ASSIGN_OR_RETURN(iceberg::TableMetadata metadata, iceberg::TableMetadata::Parse(text));
  auto shared = std::make_shared<const iceberg::TableMetadata>(std::move(metadata));
  backend.tables.Put(location, shared, ParsedMetadataBytes(text.size()));
  return shared;
}

Result<std::shared_ptr<const iceberg::ViewMetadata>> LoadViewMetadata(Backend& backend,
                                                                      const std::string& location) {
  if (auto cached = backend.views.Get(location)) return cached;
  SERAC_ASSIGN_OR_RETURN(std::string text, ReadMetadataFile(backend, location));
  SERAC_ASSIGN_OR_RETURN(iceberg::ViewMetadata metadata, iceberg::ViewMetadata::Parse(text));
  auto shared = std::make_shared<const iceberg::ViewMetadata>(std::move(metadata));
  backend.views.Put(location, shared, ParsedMetadataBytes(text.size()));
  return shared;
}

Status PurgeLocation(Backend& backend, const meta::EntityRecord& dropped) {
  // Only what the entity owned: the keys below its location's key in its own warehouse. (An empty
  // key would be the whole bucket; the store never lets an entity own that.)
  std::optional<std::string> key = meta::LocationKeyIn(dropped.warehouse, dropped.location);
  if (!key) {
    return Error(
        ErrorCode::kValidationFailed,
        "nothing purged: " + dropped.location + " is not a location inside warehouse " + dropped.warehouse);
  }
  meta::ListObjectsQuery query;
  query.bucket = dropped.warehouse;
  query.prefix = *key + "/";
  query.limit = limits::kKeysPerListMax;
  query.with_details = false;
  while (true) {
    SERAC_ASSIGN_OR_RETURN(std::vector<meta::ObjectRecord> page, backend.meta->ListObjects(query));
    for (const meta::ObjectRecord& object : page) {
      SERAC_RETURN_IF_ERROR(backend.meta->DeleteObject(object.bucket, object.key, {}));
    }
    if (page.size() < query.limit) return Status::Ok();
    query.start_after = page.back().key;
  }
}

Result<std::vector<maintenance::ListedFile>> ListTableFiles(Backend& backend, const std::string& prefix) {
  auto target = ParseS3Location(prefix);
  // An empty key would be the whole bucket: a table's files are always under a key prefix.
  if (!target || target->key.empty()) {
    return Error(ErrorCode::kInvalidArgument, "not a table location in a warehouse: " + prefix);
  }
  meta::ListObjectsQuery query;
  query.bucket = target->bucket;
  query.prefix = target->key;
  query.limit = limits::kKeysPerListMax;
  query.with_details = false;
  std::vector<maintenance::ListedFile> files;
  while (true) {
    SERAC_ASSIGN_OR_RETURN(std::vector<meta::ObjectRecord> page, backend.meta->ListObjects(query));
    for (const meta::ObjectRecord& object : page) {
      files.push_back(
          {"s3://" + object.bucket + "/" + object.key, static_cast<int64_t>(object.size), object.mtime_ms});
    }
    if (page.size() < query.limit) return files;
    query.start_after = page.back().key;
  }
}

std::vector<std::pair<std::string, std::string>> TrimmedMetadataFiles(const iceberg::TableMetadata& before,
                                                                      const std::string& before_location,
                                                                      const iceberg::TableMetadata& after,
                                                                      std::string_view warehouse,
                                                                      std::string_view owned_key) {
  std::vector<std::pair<std::string, std::string>> trimmed;
  auto is_true = [](const std::map<std::string, std::string>& properties) {
    auto it = properties.find("write.metadata.delete-after-commit.enabled");
    return it != properties.end() && ParseBoolean(it->second).value_or(false);
  };
  if (!is_true(before.properties()) && !is_true(after.properties())) return trimmed;
  std::set<std::string> kept;
  for (const iceberg::MetadataLogEntry& entry : after.metadata_log()) kept.insert(entry.metadata_file);
  std::vector<std::string> candidates;
  for (const iceberg::MetadataLogEntry& entry : before.metadata_log())
    candidates.push_back(entry.metadata_file);
  candidates.push_back(before_location);
  for (const std::string& file : candidates) {
    if (kept.count(file)) continue;
    std::optional<std::string> key = meta::LocationKeyIn(warehouse, file);
    // A metadata log may name any file (a registered table's history, a client's commit): only
    // the table's own are deleted.
    if (!key || *key == owned_key || !meta::KeyAtOrBelow(*key, owned_key)) continue;
    trimmed.emplace_back(std::string(warehouse), *key);
  }
  return trimmed;
}

}  // namespace serac::catalog
