// The body of every read-only MetaStore call, run on a reader connection. Calls that issue more
// than one statement expect the caller to have opened a read transaction so they see one snapshot.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "meta/meta_store.h"
#include "meta/sqlite/sqlite_db_internal.h"

namespace serac::meta::sqlite {

// The byte string just above every string starting with `prefix`, or nullopt when there is none
// (empty prefix, or one made only of 0xFF bytes).
std::optional<std::string> PrefixSuccessor(const std::string& prefix);

// The listing query: ?1 bucket, ?2 lower bound, ?3 upper bound (when `has_upper`), ?4 limit.
// Exposed so a test can check that SQLite answers it with a primary-key range search.
std::string ListObjectsSql(bool with_details, bool lower_inclusive, bool has_upper);

Result<BucketRecord> GetBucketRead(Connection& db, const std::string& name);
Result<std::vector<BucketRecord>> ListBucketsRead(Connection& db);
Result<BucketUsage> GetBucketUsageRead(Connection& db, const std::string& bucket);

// Joins an object written in pieces into inline_data, reading it again inside a read transaction
// when none is open.
Result<ObjectRecord> GetObjectRead(Connection& db, const std::string& bucket, const std::string& key);
Result<std::vector<ObjectRecord>> ListObjectsRead(Connection& db, const ListObjectsQuery& query);

Result<UploadRecord> GetUploadRead(Connection& db, const std::string& bucket, const std::string& key,
                                   const std::string& upload_id);
Result<std::vector<PartRecord>> ListPartsRead(Connection& db, const std::string& upload_id,
                                              uint32_t part_number_marker, uint32_t limit);
Result<std::vector<UploadRecord>> ListUploadsRead(Connection& db, const ListUploadsQuery& query);

Result<std::vector<std::string>> PeekGarbageRead(Connection& db, uint32_t limit);
Status ForEachReferencedBlobRead(Connection& db, const std::function<Status(const std::string&)>& visit);

}  // namespace serac::meta::sqlite
