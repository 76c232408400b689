// Bin-pack compaction in three phases: PlanRewrite chooses the files and groups them by partition,
// RewriteGroups reads each group through FileIO without its deleted rows and writes it again by one
// DataFileWriter (which rolls files at the target size and sorts by the table's sort order), and
// DropDanglingDeletes finds the delete files left applying to nothing; everything is swapped in by
// one replace-files commit.
#include "maintenance/rewrite_data_files.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "iceberg/scan/table_files.h"
#include "iceberg/schema/partition.h"
#include "iceberg/write/snapshot_producer.h"
#include "parquet/parquet_files.h"
#include "parquet/row_deletes.h"

namespace serac::maintenance {
namespace {

// A partition tuple (with its spec) as a map key.
std::string GroupKey(const iceberg::DataFile& file) {
  return iceberg::PartitionGroupKey(file.spec_id, file.partition);
}

// The delete files that may apply to a data file: a DV or position delete file naming it, and
// position (same or later sequence number) or equality (later) deletes of its partition, or of an
// unpartitioned spec, which apply everywhere.
class DeleteIndex {
 public:
  DeleteIndex(const iceberg::TableFiles& files, const iceberg::TableMetadata& metadata) {
    for (const iceberg::LiveFile& live : files.deletes) {
      if (live.file.referenced_data_file) {
        referenced_[*live.file.referenced_data_file].push_back(&live);
        continue;
      }
      auto spec = metadata.FindSpec(live.file.spec_id);
      (spec && spec->is_unpartitioned() ? global_ : by_partition_[GroupKey(live.file)]).push_back(&live);
    }
  }

  bool MayApply(const iceberg::LiveFile& data) const { return !Applying(data).empty(); }

  // The delete files that may apply to `data` (a position delete file of its partition may name
  // other files only: it is read to know).
  std::vector<const iceberg::LiveFile*> Applying(const iceberg::LiveFile& data) const {
    std::vector<const iceberg::LiveFile*> found;
    auto add = [&](const std::vector<const iceberg::LiveFile*>& deletes) {
      for (const iceberg::LiveFile* deletes_file : deletes) {
        if (Applies(*deletes_file, data)) found.push_back(deletes_file);
      }
    };
    if (auto it = referenced_.find(data.file.file_path); it != referenced_.end()) add(it->second);
    add(global_);
    if (auto it = by_partition_.find(GroupKey(data.file)); it != by_partition_.end()) add(it->second);
    return found;
  }

  // Whether a delete file applies to rows of `data` by sequence number: position deletes of the
  // same or a later commit, equality deletes of a later one only.
  static bool Applies(const iceberg::LiveFile& deletes_file, const iceberg::LiveFile& data) {
    return deletes_file.file.content == iceberg::FileContent::kPositionDeletes
               ? deletes_file.sequence_number >= data.sequence_number
               : deletes_file.sequence_number > data.sequence_number;
  }

 private:
  std::map<std::string, std::vector<const iceberg::LiveFile*>> referenced_;
  std::vector<const iceberg::LiveFile*> global_;
  std::map<std::string, std::vector<const iceberg::LiveFile*>> by_partition_;
};

// ---- Plan: which files are rewritten, in which groups, with which deletes. ----

// A data file to rewrite, with the delete files that may apply to it.
struct Candidate {
  const iceberg::LiveFile* live = nullptr;
  std::vector<const iceberg::LiveFile*> deletes;
  bool out_of_place = false;  // of an older spec, or (sorting) not written in the table's order
};

struct RewritePlan {
  parquet::WriteOptions write;                 // target size and sort order of the files written
  std::vector<std::vector<Candidate>> groups;  // one per partition, each written by one writer
  int64_t files_skipped_for_deletes = 0;
};

// Small files, and (applying deletes) files some delete applies to: rewritten without their
// deleted rows, so that readers stop reading those deletes. Files of an older spec, and (sorting)
// files not written in the table's order, are rewritten whatever their size or number. A partition
// with fewer than min_input_files candidates and none of those is left as it is.
Result<RewritePlan> PlanRewrite(const iceberg::TableMetadata& metadata, const iceberg::TableFiles& files,
                                const RewriteOptions& options) {
  RewritePlan plan;
  SERAC_ASSIGN_OR_RETURN(plan.write, parquet::WriteOptions::FromTableProperties(metadata.properties()));
  const iceberg::SortOrder table_order = metadata.DefaultSortOrder();
  const bool sorted = !table_order.fields.empty() && options.strategy != CompactionStrategy::kBinpack;
  plan.write.sort_order = sorted ? table_order : iceberg::SortOrder{};
  if (options.target_file_bytes > 0) plan.write.target_file_size_bytes = options.target_file_bytes;
  const int64_t small_bytes = SmallFileBytes(options, plan.write.target_file_size_bytes);
  const DeleteIndex deletes(files, metadata);
  const int32_t default_spec = metadata.default_spec_id();
  std::map<std::string, std::vector<Candidate>> by_partition;
  for (const iceberg::LiveFile& live : files.data) {
    const bool out_of_place = live.file.spec_id != default_spec ||
                              (sorted && live.file.sort_order_id.value_or(0) != table_order.order_id);
    Candidate candidate{&live, deletes.Applying(live), out_of_place};
    if (!options.apply_deletes && !candidate.deletes.empty()) {
      if (live.file.file_size_in_bytes < small_bytes) ++plan.files_skipped_for_deletes;
      continue;
    }
    if (live.file.file_size_in_bytes >= small_bytes && candidate.deletes.empty() && !out_of_place) continue;
    by_partition[GroupKey(live.file)].push_back(std::move(candidate));
  }
  for (auto& [key, group] : by_partition) {
    const bool must = std::any_of(group.begin(), group.end(), [](const Candidate& candidate) {
      return !candidate.deletes.empty() || candidate.out_of_place;
    });
    if (static_cast<int64_t>(group.size()) < options.min_input_files && !must) continue;
    plan.groups.push_back(std::move(group));
  }
  return plan;
}

// ---- Rewrite: each group read without its deleted rows and written again. ----

// The rows a candidate's deletes remove (parquet::DeletedRows reads each delete file once, however
// many data files it applies to, and keeps what it read for DropDanglingDeletes).
using parquet::DeletedRows;

Result<std::vector<int64_t>> DeletedPositions(DeletedRows& deleted, const Candidate& candidate) {
  std::vector<const iceberg::DataFile*> deletes;
  deletes.reserve(candidate.deletes.size());
  for (const iceberg::LiveFile* file : candidate.deletes) deletes.push_back(&file->file);
  return deleted.Of(candidate.live->file, deletes);
}

// Writes each group of the plan again into the producer (its files removed, the new ones added);
// the paths rewritten into `rewritten`, the writers kept in `writers` so that a failure later can
// delete what they wrote.
Status RewriteGroups(const RewritePlan& plan, const iceberg::TableMetadata& metadata, iceberg::FileIO& io,
                     DeletedRows& deleted, iceberg::SnapshotProducer& producer,
                     std::vector<parquet::DataFileWriter>& writers, std::set<std::string>& rewritten,
                     RewriteResult& result) {
  std::string data_location = metadata.location();
  while (!data_location.empty() && data_location.back() == '/') data_location.pop_back();
  data_location += "/data";
  const iceberg::Schema schema = metadata.CurrentSchema();
  for (const std::vector<Candidate>& group : plan.groups) {
    SERAC_ASSIGN_OR_RETURN(
        parquet::DataFileWriter writer,
        parquet::DataFileWriter::Make(schema, metadata.DefaultSpec(), plan.write, io, data_location));
    writers.push_back(std::move(writer));
    for (const Candidate& candidate : group) {
      const iceberg::LiveFile* live = candidate.live;
      Result<std::vector<int64_t>> positions = DeletedPositions(deleted, candidate);
      Status appended = positions.status();
      if (appended.ok()) {
        appended = writers.back().AppendTableFile(live->file.file_path, io,
                                                  positions->empty() ? nullptr : &*positions);
      }
      if (!appended.ok()) {
        return Error(appended.code(), "rewriting " + live->file.file_path + ": " + appended.message());
      }
      producer.RemoveDataFile(live->file);
      rewritten.insert(live->file.file_path);
      ++result.files_rewritten;
      result.bytes_read += live->file.file_size_in_bytes;
      result.rows_deleted += static_cast<int64_t>(positions->size());
      result.rows += live->file.record_count - static_cast<int64_t>(positions->size());
    }
    SERAC_ASSIGN_OR_RETURN(std::vector<iceberg::DataFile> written, writers.back().Finish());
    for (iceberg::DataFile& file : written) {
      ++result.files_written;
      result.bytes_written += file.file_size_in_bytes;
      producer.AddDataFile(std::move(file));
    }
    ++result.partitions;
  }
  result.delete_files_read = deleted.files_read();
  return Status::Ok();
}

// ---- Drop the delete files left applying to nothing. ----

// Delete files that apply to no data file once the rewritten ones are gone: position deletes
// naming only rewritten (or no longer live) files, and equality deletes with no file left in
// their scope written before them. The rewritten files' DVs go with them (the producer's rule).
void DropDanglingDeletes(const iceberg::TableMetadata& metadata, const iceberg::TableFiles& files,
                         const std::set<std::string>& rewritten, const DeletedRows& deleted,
                         iceberg::SnapshotProducer& producer, RewriteResult& result) {
  std::set<std::string> live_paths;
  // The lowest data sequence number of the files that stay, per partition and over all: an
  // equality delete applies to a file written before it (lower sequence number) in its scope.
  std::map<std::string, int64_t> lowest_kept_by_partition;
  std::optional<int64_t> lowest_kept;
  for (const iceberg::LiveFile& live : files.data) {
    live_paths.insert(live.file.file_path);
    if (rewritten.count(live.file.file_path) != 0) continue;
    auto [it, inserted] = lowest_kept_by_partition.emplace(GroupKey(live.file), live.sequence_number);
    if (!inserted) it->second = std::min(it->second, live.sequence_number);
    lowest_kept = std::min(lowest_kept.value_or(live.sequence_number), live.sequence_number);
  }
  for (const iceberg::LiveFile& deletes_file : files.deletes) {
    const iceberg::DataFile& file = deletes_file.file;
    if (iceberg::IsDeletionVector(file)) continue;
    bool applies_to_nothing = false;
    if (file.content == iceberg::FileContent::kPositionDeletes) {
      if (file.referenced_data_file) {
        applies_to_nothing = rewritten.count(*file.referenced_data_file) > 0;
      } else if (const auto* named_files = deleted.PositionsOf(file.file_path)) {
        applies_to_nothing = std::all_of(named_files->begin(), named_files->end(), [&](const auto& named) {
          return rewritten.count(named.first) > 0 || live_paths.count(named.first) == 0;
        });
      }
    } else if (deleted.EqualityFileRead(file.file_path)) {
      auto spec = metadata.FindSpec(file.spec_id);
      const bool global = spec && spec->is_unpartitioned();
      std::optional<int64_t> lowest = lowest_kept;
      if (!global) {
        auto it = lowest_kept_by_partition.find(GroupKey(file));
        lowest = it == lowest_kept_by_partition.end() ? std::nullopt : std::optional<int64_t>(it->second);
      }
      applies_to_nothing = !lowest || *lowest >= deletes_file.sequence_number;
    }
    if (applies_to_nothing) {
      producer.RemoveDeleteFile(file);
      ++result.delete_files_removed;
    }
  }
}

}  // namespace

int64_t SmallFileBytes(const RewriteOptions& options, int64_t target_file_bytes) {
  if (options.small_file_bytes > 0) return options.small_file_bytes;
  return (options.target_file_bytes > 0 ? options.target_file_bytes : target_file_bytes) / 4 * 3;
}

Result<RewriteResult> RewriteDataFiles(iceberg::TableCatalog& catalog, iceberg::FileIO& io,
                                       const iceberg::TableRef& table, const RewriteOptions& options) {
  SERAC_ASSIGN_OR_RETURN(iceberg::TableMetadata metadata, catalog.LoadTable(table));
  RewriteResult result;
  const std::optional<iceberg::Snapshot> snapshot = metadata.CurrentSnapshot();
  if (!snapshot) return result;
  SERAC_ASSIGN_OR_RETURN(iceberg::TableFiles files, iceberg::ReadTableFiles(io, snapshot));
  SERAC_ASSIGN_OR_RETURN(RewritePlan plan, PlanRewrite(metadata, files, options));
  result.files_skipped_for_deletes = plan.files_skipped_for_deletes;

  iceberg::SnapshotProducer producer(io, iceberg::ProducerKind::kReplaceFiles);
  producer.ValidateFromSnapshot(snapshot->snapshot_id);
  std::vector<parquet::DataFileWriter> writers;
  auto discard_written = [&] {
    for (parquet::DataFileWriter& writer : writers) writer.AbortAndDelete();
  };
  DeletedRows deleted(io, metadata.CurrentSchema());
  std::set<std::string> rewritten;
  if (Status status = RewriteGroups(plan, metadata, io, deleted, producer, writers, rewritten, result);
      !status.ok()) {
    discard_written();
    return status;
  }
  if (result.files_rewritten == 0) return result;
  DropDanglingDeletes(metadata, files, rewritten, deleted, producer, result);
  // The rewritten rows take the sequence number of the snapshot they were read from: every delete
  // committed up to it is applied, and every later one still applies to them.
  if (metadata.format_version() >= 2) producer.KeepDataSequenceNumber(snapshot->sequence_number);
  Result<int64_t> committed = iceberg::CommitSnapshot(catalog, table, producer);
  if (!committed.ok()) {
    if (committed.status().code() != ErrorCode::kOutcomeUnknown) discard_written();
    return committed.status();
  }
  result.snapshot_id = *committed;
  return result;
}

}  // namespace serac::maintenance
