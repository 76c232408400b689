#include "iceberg/scan/table_files.h"

#include "common/limits.h"

namespace serac::iceberg {

Status ForEachLiveEntry(FileIO& io, const ManifestFile& manifest,
                        const std::function<Status(ManifestEntry&)>& visit) {
  SERAC_ASSIGN_OR_RETURN(std::string bytes, io.ReadAll(manifest.manifest_path, limits::kManifestBytesMax,
                                                       "limits::kManifestBytesMax"));
  SERAC_ASSIGN_OR_RETURN(ManifestReader reader, ManifestReader::Open(bytes, manifest));
  ManifestEntry entry;
  while (true) {
    SERAC_ASSIGN_OR_RETURN(bool more, reader.Next(entry));
    if (!more) return Status::Ok();
    if (entry.status == EntryStatus::kDeleted) continue;
    SERAC_RETURN_IF_ERROR(visit(entry));
  }
}

Result<TableFiles> ReadTableFiles(FileIO& io, const std::optional<Snapshot>& snapshot) {
  TableFiles files;
  if (!snapshot) return files;
  SERAC_ASSIGN_OR_RETURN(std::vector<ManifestFile> manifests, ReadSnapshotManifests(io, *snapshot));
  for (const ManifestFile& manifest : manifests) {
    if (manifest.added_files_count == 0 && manifest.existing_files_count == 0) continue;
    const bool deletes = manifest.content == ManifestContent::kDeletes;
    SERAC_RETURN_IF_ERROR(ForEachLiveEntry(io, manifest, [&](ManifestEntry& entry) {
      LiveFile live;
      live.file = entry.file;
      live.sequence_number = entry.sequence_number.value_or(0);
      live.file_sequence_number = entry.file_sequence_number.value_or(0);
      if (deletes) {
        if (IsDeletionVector(live.file) && live.file.referenced_data_file) {
          files.dv_of_data_file[*live.file.referenced_data_file] = files.deletes.size();
        }
        files.deletes.push_back(std::move(live));
      } else {
        files.data.push_back(std::move(live));
      }
      return Status::Ok();
    }));
  }
  return files;
}

Result<DeletionVector> ReadDeletionVector(FileIO& io, const DataFile& dv) {
  if (!dv.content_offset || !dv.content_size_in_bytes || *dv.content_offset < 0 ||
      *dv.content_size_in_bytes < 0) {
    return Error(ErrorCode::kInvalidArgument, "the deletion vector in " + dv.file_path +
                                                  " has no content_offset and content_size_in_bytes");
  }
  if (static_cast<uint64_t>(*dv.content_size_in_bytes) > limits::kDeleteFileBytesMax) {
    return Error(ErrorCode::kInvalidArgument,
                 "the deletion vector in " + dv.file_path + " is larger than limits::kDeleteFileBytesMax");
  }
  SERAC_ASSIGN_OR_RETURN(std::string blob,
                         io.ReadRange(dv.file_path, static_cast<uint64_t>(*dv.content_offset),
                                      static_cast<uint64_t>(*dv.content_size_in_bytes)));
  Result<DeletionVector> vector = DeletionVector::Deserialize(blob);
  if (!vector.ok()) {
    return Error(ErrorCode::kInvalidArgument, dv.file_path + ": " + vector.status().message());
  }
  return vector;
}

Result<std::vector<DataFile>> WriteDeletionVectors(FileIO& io, const std::string& location,
                                                   const std::vector<DataFileDeletes>& deletes) {
  PuffinWriter writer;
  std::vector<DataFile> files;
  files.reserve(deletes.size());
  for (const DataFileDeletes& one : deletes) {
    PuffinBlob blob;
    blob.type = kDeletionVectorBlobType;
    blob.fields = {kRowPositionFieldId};
    blob.properties["referenced-data-file"] = one.data_file.file_path;
    blob.properties["cardinality"] = std::to_string(one.positions.cardinality());
    const PuffinBlob& placed = writer.Add(std::move(blob), one.positions.Serialize());
    DataFile dv;
    dv.content = FileContent::kPositionDeletes;
    dv.file_path = location;
    dv.file_format = "PUFFIN";
    dv.partition = one.data_file.partition;
    dv.spec_id = one.data_file.spec_id;
    dv.record_count = static_cast<int64_t>(one.positions.cardinality());
    dv.referenced_data_file = one.data_file.file_path;
    dv.content_offset = placed.offset;
    dv.content_size_in_bytes = placed.length;
    files.push_back(std::move(dv));
  }
  const std::string bytes = writer.Finish();
  SERAC_RETURN_IF_ERROR(WriteFile(io, location, bytes).status());
  for (DataFile& dv : files) dv.file_size_in_bytes = static_cast<int64_t>(bytes.size());
  return files;
}

}  // namespace serac::iceberg
