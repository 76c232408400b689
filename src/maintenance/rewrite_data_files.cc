// Bin-pack compaction: small files grouped by partition, each group read through FileIO and
// written again by one DataFileWriter (which rolls files at the target size and sorts by the
// table's sort order), everything swapped in by one replace-files commit.
#include "maintenance/rewrite_data_files.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "iceberg/partition.h"
#include "iceberg/snapshot_producer.h"
#include "iceberg/table_files.h"
#include "parquet/parquet_files.h"

namespace serac::maintenance {
namespace {

// A partition tuple (with its spec) as a map key.
std::string GroupKey(const iceberg::DataFile& file) {
  std::string key = std::to_string(file.spec_id) + "/";
  for (const iceberg::Datum& value : file.partition) {
    const std::string text = iceberg::IsNull(value) ? "" : iceberg::DatumToText(iceberg::Type{}, value);
    key += std::to_string(value.index()) + ":" + std::to_string(text.size()) + ":" + text;
  }
  return key;
}

// The delete files that may apply to a data file: a DV or position delete file naming it, and
// position (same or later sequence number) or equality (later) deletes of its partition, or of an
// unpartitioned spec, which apply everywhere.
class DeleteIndex {
 public:
  DeleteIndex(const iceberg::TableFiles& files, const iceberg::TableMetadata& metadata) {
    for (const iceberg::LiveFile& live : files.deletes) {
      if (live.file.referenced_data_file) {
        referenced_.insert(*live.file.referenced_data_file);
        continue;
      }
      auto spec = metadata.FindSpec(live.file.spec_id);
      (spec && spec->is_unpartitioned() ? global_ : by_partition_[GroupKey(live.file)]).push_back(&live);
    }
  }

  bool MayApply(const iceberg::LiveFile& data) const {
    if (referenced_.count(data.file.file_path)) return true;
    auto applies = [&](const std::vector<const iceberg::LiveFile*>& deletes) {
      return std::any_of(deletes.begin(), deletes.end(), [&](const iceberg::LiveFile* deletes_file) {
        return deletes_file->file.content == iceberg::FileContent::kPositionDeletes
                   ? deletes_file->sequence_number >= data.sequence_number
                   : deletes_file->sequence_number > data.sequence_number;
      });
    };
    auto it = by_partition_.find(GroupKey(data.file));
    return applies(global_) || (it != by_partition_.end() && applies(it->second));
  }

 private:
  std::set<std::string> referenced_;
  std::vector<const iceberg::LiveFile*> global_;
  std::map<std::string, std::vector<const iceberg::LiveFile*>> by_partition_;
};

}  // namespace

Result<RewriteResult> RewriteDataFiles(iceberg::TableCatalog& catalog, iceberg::FileIO& io,
                                       const iceberg::TableRef& table, const RewriteOptions& options) {
  SERAC_ASSIGN_OR_RETURN(iceberg::TableMetadata metadata, catalog.LoadTable(table));
  RewriteResult result;
  const std::optional<iceberg::Snapshot> snapshot = metadata.CurrentSnapshot();
  if (!snapshot) return result;
  if (metadata.Schemas().size() > 1) {
    return Error(ErrorCode::kNotImplemented,
                 table.DisplayName() + " has had " + std::to_string(metadata.Schemas().size()) +
                     " schemas: its older files may name columns that were renamed since, and compaction "
                     "rewrites files of tables with one schema only");
  }
  SERAC_ASSIGN_OR_RETURN(parquet::WriteOptions write,
                         parquet::WriteOptions::FromTableProperties(metadata.properties()));
  write.sort_order = metadata.DefaultSortOrder();
  if (options.target_file_bytes > 0) write.target_file_size_bytes = options.target_file_bytes;
  const int64_t small_bytes =
      options.small_file_bytes > 0 ? options.small_file_bytes : write.target_file_size_bytes / 4 * 3;
  SERAC_ASSIGN_OR_RETURN(iceberg::TableFiles files, iceberg::ReadTableFiles(io, snapshot));
  const DeleteIndex deletes(files, metadata);
  const int32_t default_spec = metadata.default_spec_id();
  std::map<std::string, std::vector<const iceberg::LiveFile*>> groups;
  for (const iceberg::LiveFile& live : files.data) {
    if (live.file.spec_id != default_spec || live.file.file_size_in_bytes >= small_bytes) continue;
    if (deletes.MayApply(live)) {
      ++result.files_skipped_for_deletes;
      continue;
    }
    groups[GroupKey(live.file)].push_back(&live);
  }

  iceberg::SnapshotProducer producer(io, iceberg::ProducerKind::kReplaceFiles);
  producer.ValidateFromSnapshot(snapshot->snapshot_id);
  std::vector<parquet::DataFileWriter> writers;
  auto discard_written = [&] {
    for (parquet::DataFileWriter& writer : writers) writer.AbortAndDelete();
  };
  std::string data_location = metadata.location();
  while (!data_location.empty() && data_location.back() == '/') data_location.pop_back();
  data_location += "/data";
  int64_t kept_sequence_number = 0;
  for (const auto& [key, group] : groups) {
    if (static_cast<int64_t>(group.size()) < options.min_input_files) continue;
    auto writer = parquet::DataFileWriter::Make(metadata.CurrentSchema(), metadata.DefaultSpec(), write, io,
                                                data_location);
    if (!writer.ok()) {
      discard_written();
      return writer.status();
    }
    writers.push_back(std::move(writer).value());
    for (const iceberg::LiveFile* live : group) {
      Status appended = writers.back().AppendFile(live->file.file_path, parquet::InputFormat::kParquet, &io);
      if (!appended.ok()) {
        discard_written();
        return Error(appended.code(), "rewriting " + live->file.file_path + ": " + appended.message());
      }
      producer.RemoveDataFile(live->file);
      kept_sequence_number = std::max(kept_sequence_number, live->sequence_number);
      ++result.files_rewritten;
      result.bytes_read += live->file.file_size_in_bytes;
      result.rows += live->file.record_count;
    }
    auto written = writers.back().Finish();
    if (!written.ok()) {
      discard_written();
      return written.status();
    }
    for (iceberg::DataFile& file : *written) {
      ++result.files_written;
      result.bytes_written += file.file_size_in_bytes;
      producer.AddDataFile(std::move(file));
    }
    ++result.partitions;
  }
  if (result.files_rewritten == 0) return result;
  if (metadata.format_version() >= 2) producer.KeepDataSequenceNumber(kept_sequence_number);
  Result<int64_t> committed = iceberg::CommitSnapshot(catalog, table, producer);
  if (!committed.ok()) {
    if (committed.status().code() != ErrorCode::kOutcomeUnknown) discard_written();
    return committed.status();
  }
  result.snapshot_id = *committed;
  return result;
}

}  // namespace serac::maintenance
