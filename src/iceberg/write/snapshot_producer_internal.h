// What snapshot_producer.cc and snapshot_validation.cc share: the producer's state and the
// conflict checks Prepare runs before it writes anything for an attempt.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "iceberg/scan/table_files.h"
#include "iceberg/write/snapshot_producer.h"

namespace serac::iceberg {

struct SnapshotProducer::State {
  State(FileIO& file_io, ProducerKind producer_kind) : io(file_io), kind(producer_kind) {}

  FileIO& io;
  ProducerKind kind;
  std::map<std::string, std::string> extra_summary;
  int64_t snapshot_id = 0;

  std::vector<DataFile> added_data;
  std::vector<DataFile> added_deletes;
  std::vector<DataFile> removed_data;
  std::vector<DataFile> removed_deletes;
  bool remove_all = false;
  std::optional<Expression> row_filter;  // RemoveRowsMatching
  bool added_must_match_filter = false;
  std::optional<int64_t> kept_data_sequence_number;
  bool validate_from_set = false;
  std::optional<int64_t> validate_from;

  // Written once, reused by every attempt.
  bool new_manifests_written = false;
  std::vector<ManifestFile> new_data_manifests;
  std::vector<ManifestFile> new_delete_manifests;
  // Rewrites of committed manifests, reused while the same rewrite is asked for again: by the
  // source manifest's path and the sequence number below which delete files were dropped.
  struct Rewrite {
    ManifestFile manifest;          // the source itself when nothing in it was removed
    std::vector<DataFile> removed;  // the live files it marked DELETED
  };
  std::map<std::pair<std::string, int64_t>, Rewrite> rewrites;
  std::map<std::vector<std::string>, ManifestFile> merges;  // by the paths of the merged bin
  std::vector<std::string> written;                         // every manifest and list, for CleanUp
  uint32_t attempt = 0;
};

// The conflict checks of the producer's kind against every snapshot committed between the
// change's base (`from`) and `base`'s current snapshot; kValidationFailed naming the conflict.
Status ValidateConcurrentChanges(SnapshotProducer::State& state, const TableMetadata& base,
                                 std::optional<int64_t> from);

}  // namespace serac::iceberg
