#include "maintenance/remove_unreferenced_files.h"

#include <nlohmann/json.hpp>
#include <set>

#include "common/clock.h"
#include "common/limits.h"
#include "iceberg/manifest/manifest.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/scan/table_files.h"

namespace serac::maintenance {
namespace {

using Json = nlohmann::json;

// "s3a://b/k" and "s3n://b/k" name the same object as "s3://b/k", "file:///p" the same file as "/p".
std::string Canonical(std::string location) {
  for (const char* scheme : {"s3a://", "s3n://"}) {
    if (location.rfind(scheme, 0) == 0) return "s3://" + location.substr(6);
  }
  if (location.rfind("file:///", 0) == 0) return location.substr(7);
  return location;
}

// The statistics and partition statistics files the metadata names (not in the typed model).
void AddStatisticsFiles(const iceberg::TableMetadata& table, std::set<std::string>& reached) {
  Json document = Json::parse(table.ToJsonText(), nullptr, false);
  if (!document.is_object()) return;
  for (const char* list : {"statistics", "partition-statistics"}) {
    auto files = document.find(list);
    if (files == document.end() || !files->is_array()) continue;
    for (const Json& file : *files) {
      auto path = file.find("statistics-path");
      if (path != file.end() && path->is_string()) reached.insert(Canonical(path->get<std::string>()));
    }
  }
}

}  // namespace

Result<UnreferencedResult> RemoveUnreferencedFiles(iceberg::TableCatalog& catalog, iceberg::FileIO& io,
                                                   const iceberg::TableRef& table,
                                                   const std::string& current_metadata_location,
                                                   const ListFiles& list_files,
                                                   const UnreferencedOptions& options) {
  const int64_t now_ms = options.now_ms != 0 ? options.now_ms : ToUnixMillis(Now());
  UnreferencedResult result;
  SERAC_ASSIGN_OR_RETURN(iceberg::TableMetadata before_listing, catalog.LoadTable(table));
  if (auto gc = before_listing.properties().find("gc.enabled");
      gc != before_listing.properties().end() && gc->second == "false") {
    return Error(ErrorCode::kValidationFailed,
                 table.DisplayName() +
                     " has gc.enabled=false: files under its location may belong to "
                     "another table, so none is removed");
  }
  std::string prefix = before_listing.location();
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (prefix.empty()) return Error(ErrorCode::kInvalidArgument, table.DisplayName() + " has no location");
  prefix += "/";
  // Listed first, reached after: a file committed by the time the metadata is read is reached.
  SERAC_ASSIGN_OR_RETURN(std::vector<ListedFile> listed, list_files(prefix));
  result.files_listed = static_cast<int64_t>(listed.size());
  SERAC_ASSIGN_OR_RETURN(iceberg::TableMetadata metadata, catalog.LoadTable(table));
  if (metadata.table_uuid() != before_listing.table_uuid()) {
    return Error(ErrorCode::kConflict, table.DisplayName() + " was replaced while its files were listed");
  }

  std::set<std::string> reached = {Canonical(current_metadata_location)};
  for (const iceberg::MetadataLogEntry& entry : metadata.metadata_log()) {
    reached.insert(Canonical(entry.metadata_file));
  }
  AddStatisticsFiles(metadata, reached);
  std::set<std::string> manifests_read;
  iceberg::ManifestEntry entry;
  for (const iceberg::Snapshot& snapshot : metadata.Snapshots()) {
    for (const std::string& manifest : snapshot.manifests) reached.insert(Canonical(manifest));  // v1
    if (snapshot.manifest_list.empty()) {
      if (!snapshot.manifests.empty()) {
        return Error(ErrorCode::kNotImplemented,
                     table.DisplayName() +
                         " has format v1 snapshots without manifest lists: their manifests are "
                         "not read, so no file is removed");
      }
      continue;
    }
    reached.insert(Canonical(snapshot.manifest_list));
    SERAC_ASSIGN_OR_RETURN(std::vector<iceberg::ManifestFile> manifests,
                           iceberg::ReadSnapshotManifests(io, snapshot));
    ++result.files_read;
    for (const iceberg::ManifestFile& manifest : manifests) {
      reached.insert(Canonical(manifest.manifest_path));
      if (!manifests_read.insert(manifest.manifest_path).second) continue;
      SERAC_ASSIGN_OR_RETURN(std::string bytes, io.ReadAll(manifest.manifest_path, limits::kManifestBytesMax,
                                                           "limits::kManifestBytesMax"));
      ++result.files_read;
      result.bytes_read += static_cast<int64_t>(bytes.size());
      SERAC_ASSIGN_OR_RETURN(iceberg::ManifestReader reader, iceberg::ManifestReader::Open(bytes, manifest));
      while (true) {
        SERAC_ASSIGN_OR_RETURN(bool more, reader.Next(entry));
        if (!more) break;
        reached.insert(Canonical(entry.file.file_path));  // deleted entries too: never remove what is named
      }
    }
  }

  for (const ListedFile& file : listed) {
    const std::string location = Canonical(file.location);
    if (reached.count(location) != 0) {
      ++result.files_reached;
      continue;
    }
    const bool metadata_file = location.size() > 14 && location.ends_with(".metadata.json");
    const int64_t limit =
        metadata_file ? options.non_current_older_than_ms : options.unreferenced_older_than_ms;
    if (file.modified_ms > now_ms - limit) {
      ++result.files_kept_young;
      continue;
    }
    Status deleted = io.Delete(file.location);
    if (!deleted.ok() && deleted.code() != ErrorCode::kNotFound) return deleted;
    ++result.files_removed;
    result.bytes_removed += file.size;
  }
  return result;
}

}  // namespace serac::maintenance
