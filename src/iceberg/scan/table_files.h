// The live files of a table's snapshot, read from its manifests: every data file and every delete
// file with its data sequence number, and the deletion vector of each data file. What writers need
// to delete rows (which files hold them, which DV a new one must merge) and what scans start from.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "iceberg/io/file_io.h"
#include "iceberg/manifest/manifest.h"
#include "iceberg/metadata/table_metadata.h"
#include "iceberg/puffin/puffin.h"

namespace serac::iceberg {

struct LiveFile {
  DataFile file;                // spec_id and partition as the manifest lists them
  int64_t sequence_number = 0;  // data sequence number
  int64_t file_sequence_number = 0;
};

struct TableFiles {
  std::vector<LiveFile> data;
  std::vector<LiveFile> deletes;
  // The DV of a data file, by the data file's path (an index into `deletes`).
  std::map<std::string, size_t> dv_of_data_file;
};

// The manifests of a snapshot (its manifest list read through `io`); kNotImplemented for a v1
// snapshot that lists its manifests itself.
Result<std::vector<ManifestFile>> ReadSnapshotManifests(FileIO& io, const Snapshot& snapshot);

// Calls `visit` with each live (ADDED or EXISTING) entry of one manifest, read through `io`, its
// inherited fields resolved; the entry is reused between calls, and a visit's error stops the read.
Status ForEachLiveEntry(FileIO& io, const ManifestFile& manifest,
                        const std::function<Status(ManifestEntry&)>& visit);

// The live files of `snapshot` (nullopt: the table is empty, and so is the answer).
Result<TableFiles> ReadTableFiles(FileIO& io, const std::optional<Snapshot>& snapshot);

// A DV's positions, read from its blob (ReadRange of content_offset and content_size_in_bytes).
Result<DeletionVector> ReadDeletionVector(FileIO& io, const DataFile& dv);

// One Puffin file at `location` with a DV for each data file; their delete-file entries (spec id
// and partition of the data file, referenced_data_file, blob offset and size, cardinality as the
// record count), in the order given.
struct DataFileDeletes {
  DataFile data_file;
  DeletionVector positions;
};
Result<std::vector<DataFile>> WriteDeletionVectors(FileIO& io, const std::string& location,
                                                   const std::vector<DataFileDeletes>& deletes);

}  // namespace serac::iceberg
