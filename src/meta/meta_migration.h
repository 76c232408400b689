// Moving one metadata store's whole state into another (`serac admin migrate`, from a single node's
// SQLite database into the PostgreSQL several servers share), and comparing the two afterwards.
// Everything goes through the MetaStore, CatalogStore and IamStore interfaces, so any back end may
// be the source or the target.
//
// What moves, in this order, so that every state in between is one the target's rules accept:
// buckets; every object (the Iceberg metadata files a table names are objects, so they are there
// before the table); multipart uploads in progress and their parts; warehouses (over the buckets
// already there); namespaces with their properties, parents first; tables and views; the
// maintenance settings of warehouses and tables, and the tables' job records; IAM policies, users
// with their attachments, access keys (secrets as the sealed bytes they are, which only the same
// server key opens).
//
// Resumable: each step looks at the target first and writes only what is missing there or differs
// (an object listed there with the same ETag, size, mtime, headers and blobs, an entity with the
// same uuid, locations and times, is left alone), and each write is one transaction of the target. A run
// stopped anywhere — a crash, a lost connection, a write whose answer was lost — is finished by running it
// again, with nothing written twice and nothing lost. Nothing in the target is ever deleted: what the source
// does not have is left for CompareMetaStores to report.
//
// What does not carry over as it was:
//  - the GC queue: its blobs are referenced by nothing, so the target does not need them; the
//    source's server removes them when it runs (drain it first), else the shared store's start-up
//    sweep removes them as orphans once they are old enough (limits::kSharedStoreOrphanAgeMin);
//  - leases: they belong to running servers, and none runs on either store meanwhile;
//  - maintenance job ids: the target numbers the records again, in the same order;
//  - objects written in pieces (Iceberg metadata files, whose history the source keeps once):
//    GetObject hands them over whole, so the target stores each whole; only the files the target's
//    own commits write share their history again.
// Object and part rows keep naming the same blob ids: the servers on the target must use the blob
// store the source's server used.
//
// Neither store may be written by anyone else meanwhile (the caller holds the source's data
// directory lock). Thread-safety: the functions keep no state; one call at a time per pair of
// stores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "meta/meta_store.h"

namespace serac::meta {

struct MigrationCount {
  uint64_t copied = 0;   // written to the target (created, or made equal to the source)
  uint64_t present = 0;  // already in the target as in the source: left alone
};

struct MigrationReport {
  MigrationCount buckets;
  MigrationCount objects;
  MigrationCount uploads;
  MigrationCount parts;
  MigrationCount warehouses;
  MigrationCount namespaces;
  MigrationCount tables;
  MigrationCount views;
  MigrationCount maintenance_settings;
  MigrationCount maintenance_jobs;
  MigrationCount policies;
  MigrationCount users;
  MigrationCount access_keys;
  uint64_t object_bytes_copied = 0;  // sizes of the objects copied
  // Blobs handed to MigrationOptions::copy_blob: copied, or already in the other blob store.
  MigrationCount blobs;
};

struct MigrationOptions {
  // The built-in policy names (auth/'s), registered on the target so that users to whom one is
  // attached can be created there.
  std::vector<std::string> builtin_policy_names;
  // Called with one line of progress after each bucket, warehouse and the IAM step; may be empty.
  std::function<void(const std::string& line)> progress;
  // When set, called with every blob id an object or part names, before the row that names it is
  // written to the target, and for rows already there too (so that a run resumed with it copies
  // what an earlier run left): the caller copies the blob to the target's blob store under the same
  // id. Answers whether it copied the blob (false: it was there already).
  std::function<Result<bool>(const std::string& blob_id)> copy_blob;
};

// Copies what the target lacks, as above. An error names what was being copied; the target then
// holds everything copied before it, and running again finishes the job.
Result<MigrationReport> MigrateMetaStore(MetaStore& source, MetaStore& target,
                                         const MigrationOptions& options);

struct StoreComparison {
  // Records compared, counted in the source.
  uint64_t buckets = 0;
  uint64_t objects = 0;
  uint64_t uploads = 0;
  uint64_t parts = 0;
  uint64_t warehouses = 0;
  uint64_t namespaces = 0;
  uint64_t tables = 0;
  uint64_t views = 0;
  uint64_t maintenance_settings = 0;
  uint64_t maintenance_jobs = 0;
  uint64_t policies = 0;
  uint64_t users = 0;
  uint64_t access_keys = 0;
  uint64_t difference_count = 0;
  // The first differences found (at most the number asked for), each naming the record and what
  // differs: in the order buckets, objects, uploads, warehouses, namespaces, entities, maintenance,
  // IAM, and within a kind in key order.
  std::vector<std::string> differences;
};

// Compares the state MigrateMetaStore moves: buckets; every bucket's objects (size, ETag, mtime,
// part count, checksum, headers, blob segments); uploads and their parts; warehouses; namespaces
// with their properties; tables and views (uuid, location, metadata location, created and updated
// times); maintenance settings and job records (without their ids); and the IAM snapshot but its
// generation. Records only one side has are differences too. Objects are listed page by page
// (their bytes are compared through the ETag, not read).
Result<StoreComparison> CompareMetaStores(MetaStore& source, MetaStore& target, size_t differences_kept);

}  // namespace serac::meta
