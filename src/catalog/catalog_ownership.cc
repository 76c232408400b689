// What a commit adds must be its table's own, down to the files its new manifests add: read from
// the new snapshots' manifest lists through the table's confined file access.
#include <memory>

#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_metadata_io_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "catalog/in_process_tables.h"
#include "common/limits.h"
#include "iceberg/manifest/manifest.h"
#include "meta/catalog_locations.h"

namespace serac::catalog {
namespace {

// 400 unless `location` (named by `what`) is outside serac's storage or below `owned_key`.
HandlerResult RequireOwnedIfStored(std::string_view warehouse, const std::string& owned_key,
                                   std::string_view display_name, const std::string& what,
                                   const std::string& location) {
  if (!ParseS3Location(location)) return kHandled;  // not in serac's storage: it names nothing here
  std::optional<std::string> key = meta::LocationKeyIn(warehouse, location);
  if (key && *key != owned_key && meta::KeyAtOrBelow(*key, owned_key)) return kHandled;
  return BadRequest(what + " " + location + " is outside table " + std::string(display_name) +
                    "'s location s3://" + std::string(warehouse) + "/" + owned_key +
                    ": a table's files are kept at or below its location, which it alone owns");
}

// The bytes of a file of the table, or nullopt when it is not there to look into.
Result<std::optional<std::string>> ReadIfPresent(iceberg::FileIO& io, const std::string& location,
                                                 uint64_t bytes_max, std::string_view limit_name) {
  Result<std::string> bytes = io.ReadAll(location, bytes_max, limit_name);
  if (bytes.ok()) return std::optional<std::string>(std::move(bytes).value());
  if (bytes.status().code() == ErrorCode::kNotFound) return std::optional<std::string>();
  return bytes.status();
}

}  // namespace

HandlerResult RequireAddedFilesOwned(Backend& backend, std::string_view warehouse,
                                     const std::string& owned_key, std::string_view display_name,
                                     const iceberg::TableMetadata* before,
                                     const iceberg::TableMetadata& after) {
  std::unique_ptr<iceberg::FileIO> io;
  for (const iceberg::TableMetadata::NamedLocation& named : after.LocationsAddedSince(before)) {
    if (named.manifest_list_of < 0 || !ParseS3Location(named.location)) continue;
    if (!io) io = MakeTableFileIO(*backend.meta, *backend.blobs, std::string(warehouse), owned_key);
    auto list =
        ReadIfPresent(*io, named.location, limits::kManifestListBytesMax, "limits::kManifestListBytesMax");
    if (!list.ok()) return BadRequest(named.what + " cannot be read: " + list.status().message());
    if (!list->has_value()) continue;
    auto manifests = iceberg::ReadManifestList(**list, named.location);
    if (!manifests.ok()) return BadRequest(named.what + " cannot be read: " + manifests.status().message());
    const std::string snapshot = "snapshot " + std::to_string(named.manifest_list_of);
    for (const iceberg::ManifestFile& manifest : *manifests) {
      if (manifest.added_snapshot_id != named.manifest_list_of) continue;  // committed before
      if (auto error = RequireOwnedIfStored(warehouse, owned_key, display_name, snapshot + "'s manifest",
                                            manifest.manifest_path)) {
        return error;
      }
      if (!ParseS3Location(manifest.manifest_path)) continue;
      auto bytes =
          ReadIfPresent(*io, manifest.manifest_path, limits::kManifestBytesMax, "limits::kManifestBytesMax");
      if (!bytes.ok())
        return BadRequest(snapshot + "'s manifest cannot be read: " + bytes.status().message());
      if (!bytes->has_value()) continue;
      auto reader = iceberg::ManifestReader::Open(**bytes, manifest);
      if (!reader.ok())
        return BadRequest(snapshot + "'s manifest cannot be read: " + reader.status().message());
      iceberg::ManifestEntry entry;
      while (true) {
        Result<bool> next = reader->Next(entry);
        if (!next.ok())
          return BadRequest(snapshot + "'s manifest cannot be read: " + next.status().message());
        if (!*next) break;
        if (entry.status != iceberg::EntryStatus::kAdded) continue;  // carried from a committed manifest
        const char* kind =
            manifest.content == iceberg::ManifestContent::kData ? " adds data file" : " adds delete file";
        if (auto error = RequireOwnedIfStored(warehouse, owned_key, display_name, snapshot + kind,
                                              entry.file.file_path)) {
          return error;
        }
      }
    }
  }
  return kHandled;
}

}  // namespace serac::catalog
