#include "server/migrate_command.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/policy.h"
#include "blob/blob_store.h"
#include "blob/open_blob_store.h"
#include "common/limits.h"
#include "common/store_url.h"
#include "meta/meta_migration.h"
#include "meta/open_meta_store.h"
#include "server/server_command.h"

namespace serac::server {
namespace {

// Differences the check prints; the count of all of them is printed too.
constexpr size_t kDifferencesShown = 20;

std::optional<std::string> SqlitePath(std::string_view url) {
  std::optional<std::string_view> path = StoreUrlLocation(url, "sqlite:");
  if (!path) return std::nullopt;
  return std::string(*path);
}

// The data directory a SQLite store belongs to: the server keeps meta.db in it and locks it.
std::string DataDirectoryOf(const std::string& database_path) {
  std::filesystem::path parent = std::filesystem::path(database_path).parent_path();
  return parent.empty() ? "." : parent.string();
}

bool SamePath(const std::string& a, const std::string& b) {
  std::error_code error_a;
  std::error_code error_b;
  const std::filesystem::path canonical_a = std::filesystem::weakly_canonical(a, error_a);
  const std::filesystem::path canonical_b = std::filesystem::weakly_canonical(b, error_b);
  return error_a || error_b ? a == b : canonical_a == canonical_b;
}

Status Refuse(const Status& lock) {
  if (lock.code() != ErrorCode::kAlreadyExists) return lock;
  return Error(ErrorCode::kAlreadyExists,
               lock.message() + ": stop the server before migrating, so that nothing changes meanwhile");
}

// A PostgreSQL URL may hold a password: it is never printed.
std::string Shown(const std::string& url) {
  return meta::IsSharedMetaStoreUrl(url) ? "the PostgreSQL store (URL not shown: it may hold a password)"
                                         : url;
}

void PrintCounts(std::FILE* out, const meta::MigrationReport& report) {
  const std::vector<std::pair<const char*, const meta::MigrationCount*>> rows = {
      {"buckets", &report.buckets},
      {"objects", &report.objects},
      {"multipart uploads", &report.uploads},
      {"upload parts", &report.parts},
      {"warehouses", &report.warehouses},
      {"namespaces", &report.namespaces},
      {"tables", &report.tables},
      {"views", &report.views},
      {"maintenance settings", &report.maintenance_settings},
      {"maintenance jobs", &report.maintenance_jobs},
      {"IAM policies", &report.policies},
      {"IAM users", &report.users},
      {"access keys", &report.access_keys},
      {"blobs", &report.blobs},
  };
  std::fprintf(out, "%-24s %10s %14s\n", "moved:", "copied", "already there");
  for (const auto& [name, count] : rows) {
    std::fprintf(out, "  %-22s %10llu %14llu\n", name, static_cast<unsigned long long>(count->copied),
                 static_cast<unsigned long long>(count->present));
  }
}

// Bytes moved per read when a blob is copied to another store.
constexpr size_t kBlobCopyChunkBytes = 4 * 1024 * 1024;

// Copies blob `id` from `from` to `to` under the same id, unless `to` has it at the same size
// already (an earlier run copied it); checked by size once written. Answers whether it copied.
Result<bool> CopyBlob(blob::BlobStore& from, blob::BlobStore& to, const std::string& id) {
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<blob::BlobReader> reader, from.Open(id));
  const uint64_t size = reader->size();
  const auto present = [&]() -> Result<bool> {
    Result<std::unique_ptr<blob::BlobReader>> there = to.Open(id);
    if (!there.ok()) {
      if (there.status().code() == ErrorCode::kNotFound) return false;
      return there.status();
    }
    if ((*there)->size() != size) {
      return Error(ErrorCode::kValidationFailed, "blob " + id + " is in the target blob store with " +
                                                     std::to_string((*there)->size()) + " bytes, not " +
                                                     std::to_string(size));
    }
    return true;
  };
  SERAC_ASSIGN_OR_RETURN(bool already, present());
  if (already) return false;
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<blob::BlobWriter> writer, to.CreateWithId(id));
  std::string chunk(static_cast<size_t>(std::min<uint64_t>(size, kBlobCopyChunkBytes)), '\0');
  for (uint64_t done = 0; done < size;) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(chunk.size(), size - done));
    SERAC_ASSIGN_OR_RETURN(size_t got, reader->ReadAt(done, chunk.data(), want));
    if (got == 0) return Error(ErrorCode::kIoError, "blob " + id + " ended early in the source blob store");
    SERAC_RETURN_IF_ERROR(writer->Append(chunk.data(), got));
    done += got;
  }
  Status committed = writer->Commit();
  // Another copy of this very blob got there first (an earlier run whose answer was lost).
  if (!committed.ok() && committed.code() != ErrorCode::kAlreadyExists) return committed;
  SERAC_ASSIGN_OR_RETURN(bool landed, present());
  if (!landed)
    return Error(ErrorCode::kIoError, "blob " + id + " is not in the target blob store after its copy");
  return committed.ok();
}

// Every blob the source names is in the target blob store at its size: the last check of a copy.
Status CheckCopiedBlobs(meta::MetaStore& source, blob::BlobStore& from, blob::BlobStore& to, std::FILE* out) {
  uint64_t checked = 0;
  SERAC_RETURN_IF_ERROR(source.ForEachReferencedBlob([&](const std::string& id) -> Status {
    SERAC_ASSIGN_OR_RETURN(std::unique_ptr<blob::BlobReader> original, from.Open(id));
    Result<std::unique_ptr<blob::BlobReader>> copy = to.Open(id);
    if (!copy.ok()) return Error(copy.status().code(), "check: blob " + id + ": " + copy.status().message());
    if ((*copy)->size() != original->size()) {
      return Error(ErrorCode::kValidationFailed,
                   "check: blob " + id + " has " + std::to_string((*copy)->size()) +
                       " bytes in the target blob store, not " + std::to_string(original->size()));
    }
    ++checked;
    return Status::Ok();
  }));
  std::fprintf(out, "check: every one of %llu blobs the objects and parts name is in the target blob store\n",
               static_cast<unsigned long long>(checked));
  return Status::Ok();
}

void PrintNotes(std::FILE* out, const std::string& data_dir, uint64_t queued_garbage,
                const std::string& blobs_from, const std::string& blobs_to) {
  const auto orphan_hours =
      std::chrono::duration_cast<std::chrono::hours>(limits::kSharedStoreOrphanAgeMin).count();
  if (queued_garbage > 0) {
    std::fprintf(
        out,
        "not moved: %s%llu blobs queued for garbage collection in the source. Queued blobs are referenced "
        "by nothing, so the target needs none of them. To remove them, start and stop this node's server "
        "once before migrating (its start-up sweep empties the queue); or leave them: servers on a shared "
        "store remove unreferenced blobs older than %lld hours when they start.\n",
        queued_garbage >= limits::kGarbageBatchMax ? "at least " : "",
        static_cast<unsigned long long>(queued_garbage), static_cast<long long>(orphan_hours));
  } else {
    std::fputs("not moved: the garbage-collection queue (empty in the source).\n", out);
  }
  if (blobs_to.empty()) {
    std::fprintf(
        out,
        "blobs: not copied. Objects and parts name the same blob ids as before: start every server on the "
        "target with the blob store this node used (--blob-store %s, or that directory mounted on each). "
        "Never start a server on the old store with that blob store again: its start-up sweep would take "
        "the new servers' blobs for orphans.\n",
        blobs_from.c_str());
  } else {
    std::fprintf(out,
                 "blobs: copied under the same ids; start every server on the target with --blob-store %s. "
                 "The source's blobs are left as they were.\n",
                 blobs_to.c_str());
  }
  std::fputs(
      "server key: access keys' secrets were copied sealed. Every server on the target must use this node's "
      "server key (the same --server-key-file, SERAC_SERVER_KEY_FILE or SERAC_SERVER_KEY), or no IAM key "
      "works.\n",
      out);
  std::fprintf(out,
               "root credentials: not in the metadata store. Give every server the same SERAC_ROOT_USER and "
               "SERAC_ROOT_PASSWORD, or copy %s/root-credentials into each server's data directory.\n",
               data_dir.c_str());
}

Status PrintCheck(std::FILE* out, const meta::StoreComparison& check) {
  std::fprintf(
      out,
      "check: compared %llu buckets, %llu objects, %llu multipart uploads (%llu parts), %llu warehouses, "
      "%llu namespaces, %llu tables, %llu views, %llu maintenance settings, %llu maintenance jobs, "
      "%llu IAM policies, %llu users, %llu access keys\n",
      static_cast<unsigned long long>(check.buckets), static_cast<unsigned long long>(check.objects),
      static_cast<unsigned long long>(check.uploads), static_cast<unsigned long long>(check.parts),
      static_cast<unsigned long long>(check.warehouses), static_cast<unsigned long long>(check.namespaces),
      static_cast<unsigned long long>(check.tables), static_cast<unsigned long long>(check.views),
      static_cast<unsigned long long>(check.maintenance_settings),
      static_cast<unsigned long long>(check.maintenance_jobs),
      static_cast<unsigned long long>(check.policies), static_cast<unsigned long long>(check.users),
      static_cast<unsigned long long>(check.access_keys));
  if (check.difference_count == 0) {
    std::fputs("check: source and target hold the same state\n", out);
    return Status::Ok();
  }
  std::fprintf(out, "check: %llu differences; the first:\n",
               static_cast<unsigned long long>(check.difference_count));
  for (const std::string& difference : check.differences) std::fprintf(out, "  %s\n", difference.c_str());
  return Error(ErrorCode::kValidationFailed,
               "source and target differ in " + std::to_string(check.difference_count) + " records (" +
                   check.differences.front() + (check.difference_count > 1 ? ", ..." : "") + ")");
}

}  // namespace

Status RunMigration(const MigrateCommandOptions& options, std::FILE* out) {
  const std::optional<std::string> source_path = SqlitePath(options.from_url);
  if (!source_path) {
    return Error(
        ErrorCode::kInvalidArgument,
        "--from must name a node's embedded store, sqlite:DIR/meta.db (got " + Shown(options.from_url) + ")");
  }
  std::error_code error;
  if (!std::filesystem::is_regular_file(*source_path, error)) {
    return Error(ErrorCode::kNotFound, "--from: no database at " + *source_path);
  }
  const std::optional<std::string> target_path = SqlitePath(options.to_url);
  if (target_path && SamePath(*target_path, *source_path)) {
    return Error(ErrorCode::kInvalidArgument, "--to names the same database as --from");
  }
  // The source must not change while it is copied: the server's own lock keeps one off.
  const std::string data_dir = DataDirectoryOf(*source_path);
  Result<DataDirectoryLock> source_lock = DataDirectoryLock::Acquire(data_dir);
  if (!source_lock.ok()) return Refuse(source_lock.status());
  std::optional<DataDirectoryLock> target_lock;
  if (target_path && DataDirectoryOf(*target_path) != data_dir) {
    // A SQLite target is a data directory of its own, which a server must not use meanwhile either.
    std::filesystem::create_directories(DataDirectoryOf(*target_path), error);
    if (error) {
      return Error(ErrorCode::kIoError,
                   "--to: cannot create " + DataDirectoryOf(*target_path) + ": " + error.message());
    }
    Result<DataDirectoryLock> lock = DataDirectoryLock::Acquire(DataDirectoryOf(*target_path));
    if (!lock.ok()) return Refuse(lock.status());
    target_lock.emplace(std::move(lock).value());
  }

  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<meta::MetaStore> source, meta::OpenMetaStore(options.from_url));
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<meta::MetaStore> target, meta::OpenMetaStore(options.to_url));
  std::fprintf(out, "migrating %s into %s\n", options.from_url.c_str(), Shown(options.to_url).c_str());
  std::fflush(out);

  // The blob stores, when the blobs move too.
  const std::string blobs_from =
      options.blobs_from_url.empty() ? blob::DefaultBlobStoreUrl(data_dir) : options.blobs_from_url;
  std::unique_ptr<blob::BlobStore> from_blobs;
  std::unique_ptr<blob::BlobStore> to_blobs;
  if (!options.copy_blobs_to_url.empty()) {
    RegisterUpstreamBlobStores();
    SERAC_ASSIGN_OR_RETURN(from_blobs, blob::OpenBlobStore(blobs_from));
    SERAC_ASSIGN_OR_RETURN(to_blobs, blob::OpenBlobStore(options.copy_blobs_to_url));
    std::fprintf(out, "copying blobs from %s to %s\n", blobs_from.c_str(), options.copy_blobs_to_url.c_str());
  }

  meta::MigrationOptions migration;
  if (to_blobs) {
    migration.copy_blob = [&](const std::string& id) { return CopyBlob(*from_blobs, *to_blobs, id); };
  }
  for (std::string_view name : auth::BuiltinPolicyNames()) migration.builtin_policy_names.emplace_back(name);
  migration.progress = [out](const std::string& line) {
    std::fprintf(out, "  %s\n", line.c_str());
    std::fflush(out);
  };
  Result<meta::MigrationReport> report = meta::MigrateMetaStore(*source, *target, migration);
  if (!report.ok()) {
    return Error(
        report.status().code(),
        report.status().message() + " (what was copied before stays; run the command again to resume)");
  }
  PrintCounts(out, *report);
  SERAC_ASSIGN_OR_RETURN(std::vector<std::string> garbage, source->PeekGarbage(limits::kGarbageBatchMax));
  PrintNotes(out, data_dir, garbage.size(), blobs_from, options.copy_blobs_to_url);
  std::fflush(out);

  SERAC_ASSIGN_OR_RETURN(meta::StoreComparison check,
                         meta::CompareMetaStores(*source, *target, kDifferencesShown));
  SERAC_RETURN_IF_ERROR(PrintCheck(out, check));
  if (to_blobs) SERAC_RETURN_IF_ERROR(CheckCopiedBlobs(*source, *from_blobs, *to_blobs, out));
  std::fflush(out);
  return Status::Ok();
}

int RunMigrateCommand(const MigrateCommandOptions& options) {
  Status status = RunMigration(options, stdout);
  std::fflush(stdout);
  if (status.ok()) return 0;
  std::fprintf(stderr, "serac admin migrate: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace serac::server
