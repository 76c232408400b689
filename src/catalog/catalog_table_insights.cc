// serac's own read-only views of a table, for the web console (not advertised in /v1/config):
//
//   GET .../tables/{t}/preview[?limit=N][&snapshot-id=ID | &ref=NAME]
//     The first rows of a snapshot (the current one by default) with every delete applied, read by
//     the server's own Parquet reader (parquet/table_rows.h), values as display text. It reads the
//     table's data, so besides s3tables:GetTable the caller must be allowed s3:GetObject on the
//     table's files, as vended credentials are.
//   GET .../tables/{t}/files[?snapshot-id=ID | ?ref=NAME]
//     The live data and delete files of a snapshot, as its manifests list them.
//   GET .../tables/{t}/health
//     Figures of the current snapshot's files and of its snapshots, judged with the table's
//     effective maintenance settings (catalog/maintenance_settings.h): small files compaction would
//     pack, delete files every read merges, snapshots expiry would remove now (found by running the
//     expiry itself on a copy of the metadata in memory, deleting nothing), and what fixing them
//     would free.
#include <charconv>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "auth/identity.h"
#include "auth/policy.h"
#include "catalog/catalog_access_internal.h"
#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_metadata_io_internal.h"
#include "catalog/catalog_responses_internal.h"
#include "catalog/catalog_routes_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "catalog/catalog_tables_internal.h"
#include "catalog/in_process_tables.h"
#include "catalog/maintenance_settings.h"
#include "common/encoding.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "iceberg/scan/table_files.h"
#include "iceberg/schema/partition.h"
#include "iceberg/write/memory_table_catalog.h"
#include "maintenance/expire_snapshots.h"
#include "maintenance/rewrite_data_files.h"
#include "parquet/table_rows.h"

namespace serac::catalog {
namespace {

using iceberg::TypeId;

using TableMetadataPtr = std::shared_ptr<const iceberg::TableMetadata>;

HandlerResult LoadRouteTable(RequestContext& ctx, TableMetadataPtr& metadata) {
  // The route's check found the table (ctx.entity) and authorised exactly that one.
  if (!ctx.entity) return NoSuchTable(EntityDisplayName(ctx));
  auto loaded = LoadTableMetadata(ctx.backend, ctx.entity->metadata_location);
  if (!loaded.ok()) return ErrorFromStatus(loaded.status(), NoSuchTable(EntityDisplayName(ctx)));
  metadata = std::move(loaded).value();
  return kHandled;
}

// A file of the table that cannot be read (gone, not Parquet, damaged): the table's metadata names
// it, so the fault is the table's, not the request's; the message names the file.
IcebergError TableFileError(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kNotFound:
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kMalformedDocument:
      return MakeError(500, "ServerErrorException", "cannot read the table's files: " + status.message());
    default:
      return ErrorFromStatus(status, BadRequest(status.message()));
  }
}

IcebergError NoSuchSnapshot(std::string message) {
  return MakeError(404, "NoSuchSnapshotException", std::move(message));
}

std::optional<int64_t> ParseInteger(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// The snapshot a request names: ?snapshot-id=ID or ?ref=NAME (a branch or tag), else the current
// one of main; nullopt for a table without one.
HandlerResult ResolveSnapshot(RequestContext& ctx, const iceberg::TableMetadata& metadata,
                              std::optional<iceberg::Snapshot>& snapshot) {
  const std::string* id_text = ctx.query.Find("snapshot-id");
  const std::string* ref_name = ctx.query.Find("ref");
  if (id_text != nullptr && ref_name != nullptr) return BadRequest("snapshot-id and ref: give one of them");
  if (id_text != nullptr) {
    const std::optional<int64_t> id = ParseInteger(*id_text);
    if (!id) return BadRequest("snapshot-id: \"" + *id_text + "\" is not a snapshot id");
    snapshot = metadata.FindSnapshot(*id);
    if (!snapshot) return NoSuchSnapshot("the table has no snapshot " + *id_text);
    return kHandled;
  }
  if (ref_name != nullptr) {
    const auto refs = metadata.Refs();
    auto ref = refs.find(*ref_name);
    if (ref == refs.end()) {
      if (*ref_name == "main" && metadata.current_snapshot_id() < 0) return kHandled;  // an empty table
      return NoSuchSnapshot("the table has no branch or tag " + *ref_name);
    }
    snapshot = metadata.FindSnapshot(ref->second.snapshot_id);
    if (!snapshot) {
      return NoSuchSnapshot(*ref_name + " points at snapshot " + std::to_string(ref->second.snapshot_id) +
                            ", which the table does not have");
    }
    return kHandled;
  }
  snapshot = metadata.CurrentSnapshot();
  return kHandled;
}

Json SnapshotIdJson(const std::optional<iceberg::Snapshot>& snapshot) {
  return snapshot ? Json(snapshot->snapshot_id) : Json(nullptr);
}

// An Iceberg type as text: the spec's names of primitives ("long", "timestamptz", "fixed[16]"),
// "decimal(P,S)", and "struct<name:type,...>", "list<type>", "map<key,value>".
std::string TypeText(const iceberg::Type& type) {
  switch (type.id) {
    case TypeId::kDecimal:
      return "decimal(" + std::to_string(type.precision) + "," + std::to_string(type.scale) + ")";
    case TypeId::kStruct: {
      std::string text = "struct<";
      for (size_t i = 0; i < type.fields.size(); ++i) {
        if (i > 0) text += ',';
        text += type.fields[i].name + ":" + TypeText(type.fields[i].type);
      }
      return text + ">";
    }
    case TypeId::kList:
      return "list<" + (type.fields.empty() ? std::string() : TypeText(type.fields[0].type)) + ">";
    case TypeId::kMap:
      return "map<" +
             (type.fields.size() < 2 ? std::string(",")
                                     : TypeText(type.fields[0].type) + "," + TypeText(type.fields[1].type)) +
             ">";
    default:
      return type.Name();
  }
}

Json ColumnsJson(const iceberg::Schema& schema) {
  Json columns = Json::array();
  for (const iceberg::NestedField& field : schema.fields) {
    columns.push_back({{"name", field.name}, {"type", TypeText(field.type)}});
  }
  return columns;
}

// ---- preview ----

// Reading rows is reading the table's files: s3:GetObject on them, as vended credentials are
// granted (catalog_credentials.cc), with the request's condition keys.
HandlerResult AuthorizeReadingFiles(RequestContext& ctx) {
  std::string location = ctx.entity->location;
  while (!location.empty() && location.back() == '/') location.pop_back();
  auto parsed = ParseS3Location(location);
  if (!parsed || parsed->key.empty()) {
    return MakeError(403, "ForbiddenException",
                     "the files of " + EntityDisplayName(ctx) + " are not objects of this server");
  }
  return Authorize(ctx, "s3:GetObject", auth::S3ObjectArn(parsed->bucket, parsed->key + "/*"),
                   auth::RequestConditions(ctx.principal, ctx.request));
}

HandlerResult ReadLimit(RequestContext& ctx, uint64_t& limit) {
  limit = limits::kTablePreviewRowsDefault;
  const std::string* text = ctx.query.Find("limit");
  if (text == nullptr) return kHandled;
  const std::optional<int64_t> value = ParseInteger(*text);
  if (!value || *value < 0 || *value > static_cast<int64_t>(limits::kTablePreviewRowsMax)) {
    return BadRequest("limit: must be a whole number of rows from 0 to " +
                      std::to_string(limits::kTablePreviewRowsMax) + " (limits::kTablePreviewRowsMax)");
  }
  limit = static_cast<uint64_t>(*value);
  return kHandled;
}

}  // namespace

HandlerResult PreviewTable(RequestContext& ctx) {
  uint64_t limit = 0;
  if (auto error = ReadLimit(ctx, limit)) return error;
  TableMetadataPtr metadata;
  if (auto error = LoadRouteTable(ctx, metadata)) return error;
  if (auto error = AuthorizeReadingFiles(ctx)) return error;
  std::optional<iceberg::Snapshot> snapshot;
  if (auto error = ResolveSnapshot(ctx, *metadata, snapshot)) return error;
  if (!snapshot) {
    return SendJson(ctx, {{"snapshot-id", nullptr},
                          {"columns", ColumnsJson(metadata->CurrentSchema())},
                          {"rows", Json::array()},
                          {"truncated", false},
                          {"delete-files-applied", 0}});
  }
  std::unique_ptr<iceberg::FileIO> io;
  if (auto error = OpenTableFiles(ctx, io)) return error;
  parquet::TableRowsOptions options;
  options.rows_max = limit + 1;  // one more, to know whether there are more
  auto read = parquet::ReadTableRows(*io, *metadata, snapshot->snapshot_id, options);
  if (!read.ok()) return TableFileError(read.status());
  const bool truncated = read->rows.size() > limit || read->stopped_at_bytes;
  if (read->rows.size() > limit) read->rows.resize(limit);
  Json rows = Json::array();
  for (const parquet::CellRow& row : read->rows) {
    Json cells = Json::array();
    for (const std::optional<std::string>& cell : row) cells.push_back(cell ? Json(*cell) : Json(nullptr));
    rows.push_back(std::move(cells));
  }
  return SendJson(ctx, {{"snapshot-id", snapshot->snapshot_id},
                        {"columns", ColumnsJson(read->schema)},
                        {"rows", std::move(rows)},
                        {"truncated", truncated},
                        {"delete-files-applied", read->delete_files_applied}});
}

namespace {

// ---- files ----

// Partitions as "name=value/name=value" (iceberg::PartitionText: Java's partition path, not
// URL-encoded, so the ordinals of the time transforms read as the times they stand for), with each
// spec's partition type worked out once.
class PartitionTexts {
 public:
  explicit PartitionTexts(const iceberg::TableMetadata& metadata) : metadata_(metadata) {}

  std::string Of(const iceberg::DataFile& file) {
    const auto& [spec, type] = SpecOf(file.spec_id);
    if (!spec) return "";
    return iceberg::PartitionText(*spec, type, file.partition);
  }

 private:
  using Spec = std::pair<std::optional<iceberg::PartitionSpec>, iceberg::Type>;

  const Spec& SpecOf(int32_t spec_id) {
    auto [it, added] = specs_.try_emplace(spec_id);
    if (!added) return it->second;
    std::optional<iceberg::PartitionSpec> spec = metadata_.FindSpec(spec_id);
    if (!spec) return it->second;
    Result<iceberg::Type> type = iceberg::PartitionType(*spec, metadata_.CurrentSchema());
    for (const iceberg::Schema& schema : metadata_.Schemas()) {
      if (type.ok()) break;
      type = iceberg::PartitionType(*spec, schema);  // a source column dropped since
    }
    if (type.ok()) it->second = {std::move(spec), std::move(type).value()};
    return it->second;
  }

  const iceberg::TableMetadata& metadata_;
  std::map<int32_t, Spec> specs_;
};

// Calls `visit` with each live file of `snapshot`'s manifests until it returns false.
Status ForEachLiveFile(iceberg::FileIO& io, const iceberg::Snapshot& snapshot,
                       const std::function<bool(const iceberg::ManifestEntry&)>& visit) {
  SERAC_ASSIGN_OR_RETURN(std::vector<iceberg::ManifestFile> manifests,
                         iceberg::ReadSnapshotManifests(io, snapshot));
  bool stopped = false;
  for (const iceberg::ManifestFile& manifest : manifests) {
    if (manifest.added_files_count == 0 && manifest.existing_files_count == 0) continue;
    Status read = iceberg::ForEachLiveEntry(io, manifest, [&](iceberg::ManifestEntry& entry) -> Status {
      if (visit(entry)) return Status::Ok();
      stopped = true;
      return Error(ErrorCode::kLimitExceeded, "stopped");
    });
    if (stopped) return Status::Ok();
    SERAC_RETURN_IF_ERROR(read);
  }
  return Status::Ok();
}

}  // namespace

HandlerResult ListTableFiles(RequestContext& ctx) {
  TableMetadataPtr metadata;
  if (auto error = LoadRouteTable(ctx, metadata)) return error;
  std::optional<iceberg::Snapshot> snapshot;
  if (auto error = ResolveSnapshot(ctx, *metadata, snapshot)) return error;
  Json files = Json::array();
  bool truncated = false;
  if (snapshot) {
    std::unique_ptr<iceberg::FileIO> io;
    if (auto error = OpenTableFiles(ctx, io)) return error;
    PartitionTexts partitions(*metadata);
    Status listed = ForEachLiveFile(*io, *snapshot, [&](const iceberg::ManifestEntry& entry) {
      if (files.size() >= limits::kTableFilesListedMax) {
        truncated = true;
        return false;
      }
      const iceberg::DataFile& file = entry.file;
      files.push_back({{"path", file.file_path},
                       {"content", iceberg::FileContentName(file.content)},
                       {"format", AsciiLower(file.file_format)},
                       {"partition", partitions.Of(file)},
                       {"records", file.record_count},
                       {"bytes", file.file_size_in_bytes},
                       {"spec-id", file.spec_id}});
      return true;
    });
    if (!listed.ok()) return TableFileError(listed);
  }
  return SendJson(
      ctx,
      {{"snapshot-id", SnapshotIdJson(snapshot)}, {"files", std::move(files)}, {"truncated", truncated}});
}

namespace {

// ---- health ----

// The FileIO of a dry run: reads go to the table's files, nothing is written or deleted. A delete
// is noted with the file's size, so that the run says what it would free.
class DryRunFileIO final : public iceberg::FileIO {
 public:
  explicit DryRunFileIO(iceberg::FileIO& files) : files_(files) {}

  Result<std::unique_ptr<iceberg::OutputFile>> Create(const std::string& location) override {
    return Error(ErrorCode::kNotImplemented, "a dry run writes nothing (" + location + ")");
  }
  Result<std::string> ReadAll(const std::string& location, uint64_t bytes_max,
                              std::string_view limit_name) override {
    read_whole_.insert(location);
    return files_.ReadAll(location, bytes_max, limit_name);
  }
  Result<uint64_t> Size(const std::string& location) override { return files_.Size(location); }
  Result<std::string> ReadRange(const std::string& location, uint64_t offset, uint64_t length) override {
    return files_.ReadRange(location, offset, length);
  }
  Status Delete(const std::string& location) override {
    deleted_.insert(location);
    return Status::Ok();
  }

  // The bytes of the files the run would delete that it did not read whole: data and delete files,
  // not the manifest lists and manifests it read to find them, nor those in `except`.
  int64_t DataBytesDeleted(const std::set<std::string>& except) {
    int64_t bytes = 0;
    for (const std::string& location : deleted_) {
      if (read_whole_.count(location) != 0 || except.count(location) != 0) continue;
      Result<uint64_t> size = files_.Size(location);
      if (size.ok()) bytes += static_cast<int64_t>(*size);
    }
    return bytes;
  }

 private:
  iceberg::FileIO& files_;
  std::set<std::string> read_whole_;
  std::set<std::string> deleted_;
};

struct ExpiryFigures {
  int64_t snapshots = 0;  // that a snapshot management job would expire now
  int64_t bytes = 0;      // of the data and delete files only those snapshots reach
};

// What a snapshot management job would do now, found by running the expiry itself on a copy of the
// metadata in memory over files it cannot delete.
Result<ExpiryFigures> DryRunExpiry(iceberg::FileIO& io, const iceberg::TableMetadata& metadata,
                                   const MaintenanceSettings& settings, const iceberg::TableRef& table) {
  ExpiryFigures figures;
  iceberg::MemoryTableCatalog copy(metadata);
  DryRunFileIO dry(io);
  maintenance::ExpireOptions options;  // as the job runner sets them (job_runner.cc)
  options.max_snapshot_age_ms = settings.max_snapshot_age_ms;
  options.min_snapshots_to_keep = settings.min_snapshots_to_keep;
  Result<maintenance::ExpireResult> expired = maintenance::ExpireSnapshots(copy, dry, table, options);
  if (!expired.ok()) {
    // gc.enabled=false: expiry leaves the table alone, and so would a job.
    if (expired.status().code() == ErrorCode::kValidationFailed) return figures;
    return expired.status();
  }
  figures.snapshots = expired->snapshots_removed;
  std::set<std::string> not_data;
  for (const iceberg::Snapshot& snapshot : metadata.Snapshots()) not_data.insert(snapshot.manifest_list);
  for (const std::string& statistics : metadata.StatisticsFiles()) not_data.insert(statistics);
  figures.bytes = dry.DataBytesDeleted(not_data);
  return figures;
}

std::string BytesText(int64_t bytes) {
  constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  for (value /= 1024; value >= 1024 && unit + 1 < std::size(kUnits); value /= 1024) ++unit;
  char text[32];
  const int precision = value < 10 && value != static_cast<int64_t>(value) ? 1 : 0;
  std::snprintf(text, sizeof(text), "%.*f %s", precision, value, kUnits[unit]);
  return text;
}

std::string DurationText(int64_t ms) {
  if (ms >= 3'600'000 && ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + " hours";
  if (ms >= 60'000 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + " minutes";
  if (ms >= 1000 && ms % 1000 == 0) return std::to_string(ms / 1000) + " seconds";
  return std::to_string(ms) + " ms";
}

std::string Plural(int64_t count, const std::string& one, const std::string& many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

struct FileFigures {
  int64_t data_files = 0;
  int64_t data_bytes = 0;
  int64_t small_files = 0;
  int64_t delete_files = 0;
  int64_t delete_records = 0;
  int64_t delete_bytes = 0;  // each file once (a Puffin file holds many DVs)
};

// The live files of the current snapshot, with the small data files compaction would pack: those
// under its threshold in partitions holding at least its minimum number of them (a lone small file
// is left as it is).
Result<FileFigures> CurrentFileFigures(iceberg::FileIO& io, const iceberg::TableMetadata& metadata,
                                       int64_t small_file_bytes, int32_t min_input_files) {
  FileFigures figures;
  const std::optional<iceberg::Snapshot> current = metadata.CurrentSnapshot();
  if (!current) return figures;
  std::map<std::string, int64_t> small_by_partition;
  std::set<std::string> delete_paths;
  SERAC_RETURN_IF_ERROR(ForEachLiveFile(io, *current, [&](const iceberg::ManifestEntry& entry) {
    const iceberg::DataFile& file = entry.file;
    if (file.content == iceberg::FileContent::kData) {
      ++figures.data_files;
      figures.data_bytes += file.file_size_in_bytes;
      if (file.file_size_in_bytes < small_file_bytes) {
        ++small_by_partition[iceberg::PartitionGroupKey(file.spec_id, file.partition)];
      }
    } else {
      ++figures.delete_files;
      figures.delete_records += file.record_count;
      if (delete_paths.insert(file.file_path).second) figures.delete_bytes += file.file_size_in_bytes;
    }
    return true;
  }));
  for (const auto& [partition, count] : small_by_partition) {
    if (count >= min_input_files) figures.small_files += count;
  }
  return figures;
}

}  // namespace

HandlerResult GetTableHealth(RequestContext& ctx) {
  TableMetadataPtr metadata;
  if (auto error = LoadRouteTable(ctx, metadata)) return error;
  auto settings =
      LoadTableSettings(ctx.catalog(), ctx.path.warehouse, ctx.entity->uuid, metadata->properties());
  if (!settings.ok()) return ErrorFromStatus(settings.status(), BadRequest(settings.status().message()));
  std::unique_ptr<iceberg::FileIO> io;
  if (auto error = OpenTableFiles(ctx, io)) return error;

  // Compaction's rule for a small file (maintenance/rewrite_data_files.h, as the job runner sets
  // its options): under RewriteOptions::small_file_bytes, by default three quarters of the target.
  maintenance::RewriteOptions compaction;
  compaction.target_file_bytes = settings->target_file_size_bytes;
  const int64_t small_file_bytes = maintenance::SmallFileBytes(compaction, compaction.target_file_bytes);
  auto files = CurrentFileFigures(*io, *metadata, small_file_bytes, compaction.min_input_files);
  if (!files.ok()) return TableFileError(files.status());
  const iceberg::TableRef table{ctx.entity->levels, ctx.entity->name};
  auto expiry = DryRunExpiry(*io, *metadata, *settings, table);
  if (!expiry.ok()) return TableFileError(expiry.status());

  Json findings = Json::array();
  if (files->small_files >= kAutoCompactionSmallFilesMin) {
    std::string message = Plural(files->small_files, "data file is", "data files are") + " smaller than " +
                          BytesText(small_file_bytes) + " (three quarters of the " +
                          BytesText(settings->target_file_size_bytes) +
                          " target file size) in partitions holding two or more of them: compaction would "
                          "pack them into fewer, larger files.";
    if (!settings->compaction_enabled) message += " Compaction is disabled for this table.";
    findings.push_back({{"kind", "small-files"}, {"message", message}, {"fix", "icebergCompaction"}});
  }
  if (files->delete_files > 0 &&
      static_cast<double>(files->delete_files) >=
          kAutoCompactionDeleteFilesPerDataFile * static_cast<double>(files->data_files)) {
    std::string message = Plural(files->delete_files, "delete file", "delete files") + " (" +
                          Plural(files->delete_records, "deleted row", "deleted rows") + ", " +
                          BytesText(files->delete_bytes) +
                          (files->delete_files == 1 ? ") applies" : ") apply") + " to the table's " +
                          Plural(files->data_files, "data file", "data files") +
                          ": every read merges them in; compaction would apply them and drop them.";
    if (!settings->compaction_enabled) message += " Compaction is disabled for this table.";
    findings.push_back({{"kind", "delete-files"}, {"message", message}, {"fix", "icebergCompaction"}});
  }
  if (expiry->snapshots > 0) {
    std::string message = Plural(expiry->snapshots, "snapshot is", "snapshots are") +
                          " older than the age limit of " + DurationText(settings->max_snapshot_age_ms) +
                          " and beyond the " +
                          Plural(settings->min_snapshots_to_keep, "snapshot", "snapshots") +
                          " each branch keeps: expiring them would free " + BytesText(expiry->bytes) +
                          " of data and delete files.";
    if (!settings->snapshot_management_enabled) message += " Snapshot management is disabled for this table.";
    findings.push_back({{"kind", "snapshots"}, {"message", message}, {"fix", "icebergSnapshotManagement"}});
  }
  return SendJson(ctx, {{"data-files", files->data_files},
                        {"data-bytes", files->data_bytes},
                        {"small-files", files->small_files},
                        {"small-file-bytes-threshold", small_file_bytes},
                        {"delete-files", files->delete_files},
                        {"delete-records", files->delete_records},
                        {"snapshots", static_cast<int64_t>(metadata->snapshot_count())},
                        {"snapshots-beyond-expiry", expiry->snapshots},
                        {"bytes-reclaimable", expiry->bytes + files->delete_bytes},
                        {"findings", std::move(findings)}});
}

}  // namespace serac::catalog
