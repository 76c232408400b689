#include <array>
#include <string>

#include "meta/sqlite/sqlite_schema_internal.h"

namespace serac::meta::sqlite {
namespace {

// Object keys are BLOBs so that ORDER BY key is raw byte order, as S3 listings require.
// Inline object bytes live in a rowid table of their own: WITHOUT ROWID rows are kept whole in
// the b-tree, and large ones would make every listing page scan hold only a few keys.
constexpr std::string_view kInitialSchema = R"sql(
CREATE TABLE buckets(
  name TEXT PRIMARY KEY NOT NULL,
  created_ms INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE inline_data(
  id INTEGER PRIMARY KEY,
  data BLOB NOT NULL
);

CREATE TABLE objects(
  bucket TEXT NOT NULL REFERENCES buckets(name),
  key BLOB NOT NULL,
  size INTEGER NOT NULL,
  etag TEXT NOT NULL,
  mtime_ms INTEGER NOT NULL,
  part_count INTEGER NOT NULL DEFAULT 0,
  headers TEXT,
  checksum_algorithm TEXT,
  checksum_value TEXT,
  checksum_type TEXT,
  inline_id INTEGER,
  segments TEXT,
  PRIMARY KEY(bucket, key)
) WITHOUT ROWID;

CREATE TABLE uploads(
  upload_id TEXT PRIMARY KEY NOT NULL,
  bucket TEXT NOT NULL REFERENCES buckets(name),
  key BLOB NOT NULL,
  initiated_ms INTEGER NOT NULL,
  headers TEXT,
  checksum_algorithm TEXT NOT NULL DEFAULT '',
  checksum_type TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
CREATE INDEX uploads_by_key ON uploads(bucket, key, upload_id);

CREATE TABLE parts(
  upload_id TEXT NOT NULL REFERENCES uploads(upload_id) ON DELETE CASCADE,
  part_number INTEGER NOT NULL,
  size INTEGER NOT NULL,
  etag TEXT NOT NULL,
  mtime_ms INTEGER NOT NULL,
  blob_id TEXT NOT NULL,
  checksum_value TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(upload_id, part_number)
) WITHOUT ROWID;

CREATE TABLE gc_queue(
  blob_id TEXT PRIMARY KEY NOT NULL,
  queued_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX gc_queue_by_age ON gc_queue(queued_ms, blob_id);
)sql";

// The Iceberg catalog. A namespace path is its levels joined with 0x1F (which no level may hold),
// as a BLOB so that comparisons are raw byte order. Each namespace row repeats its parent path and
// last level so that listing the children of one namespace is a range scan of one index.
// Tables and views share the primary key, so one name cannot be both in a namespace.
constexpr std::string_view kCatalogSchema = R"sql(
CREATE TABLE warehouses(
  name TEXT PRIMARY KEY NOT NULL REFERENCES buckets(name),
  created_ms INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE namespaces(
  warehouse TEXT NOT NULL REFERENCES warehouses(name),
  path BLOB NOT NULL,
  parent BLOB NOT NULL,
  last_level BLOB NOT NULL,
  properties TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  PRIMARY KEY(warehouse, path)
) WITHOUT ROWID;
CREATE INDEX namespaces_by_parent ON namespaces(warehouse, parent, last_level);

CREATE TABLE entities(
  warehouse TEXT NOT NULL,
  namespace BLOB NOT NULL,
  name BLOB NOT NULL,
  kind INTEGER NOT NULL,
  uuid TEXT NOT NULL,
  location TEXT NOT NULL,
  metadata_location TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  PRIMARY KEY(warehouse, namespace, name),
  FOREIGN KEY(warehouse, namespace) REFERENCES namespaces(warehouse, path)
) WITHOUT ROWID;
CREATE INDEX entities_by_kind ON entities(warehouse, namespace, kind, name);
)sql";

// Identity and access. Attachments carry no foreign key to iam_policies because built-in policies
// are attached by name without a stored row. iam_generation holds exactly one row: the counter
// every IAM write increments, so that servers sharing the database notice each other's changes.
constexpr std::string_view kIamSchema = R"sql(
CREATE TABLE iam_users(
  name TEXT PRIMARY KEY NOT NULL,
  enabled INTEGER NOT NULL,
  created_ms INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE iam_access_keys(
  access_key TEXT PRIMARY KEY NOT NULL,
  user_name TEXT NOT NULL REFERENCES iam_users(name),
  sealed_secret BLOB NOT NULL,
  enabled INTEGER NOT NULL,
  created_ms INTEGER NOT NULL,
  description TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX iam_access_keys_by_user ON iam_access_keys(user_name, access_key);

CREATE TABLE iam_policies(
  name TEXT PRIMARY KEY NOT NULL,
  document TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE iam_attachments(
  user_name TEXT NOT NULL REFERENCES iam_users(name),
  policy_name TEXT NOT NULL,
  PRIMARY KEY(user_name, policy_name)
) WITHOUT ROWID;
CREATE INDEX iam_attachments_by_policy ON iam_attachments(policy_name, user_name);

CREATE TABLE iam_generation(
  id INTEGER PRIMARY KEY CHECK (id = 0),
  generation INTEGER NOT NULL
);
INSERT INTO iam_generation(id, generation) VALUES (0, 0);
)sql";

// Objects written in pieces (Iceberg metadata files): `pieces` lists them in order, and the bytes
// of shared pieces live once in shared_texts, found by digest. Their reference counts are a table
// of their own so that counting a use rewrites a small row, not the bytes. Ids are never reused.
constexpr std::string_view kSharedTextSchema = R"sql(
CREATE TABLE shared_texts(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sha256 BLOB NOT NULL UNIQUE,
  bytes BLOB NOT NULL
);

CREATE TABLE shared_text_uses(
  id INTEGER PRIMARY KEY,
  uses INTEGER NOT NULL
);

ALTER TABLE objects ADD COLUMN pieces TEXT;
)sql";

// Table maintenance: settings of a warehouse (table_uuid '') or of one table, and a bounded history
// of each table's jobs. Rows are keyed by the table's uuid, not its name, so a rename keeps them;
// DropEntity and DeleteWarehouse remove them. Job ids are never reused (AUTOINCREMENT): a job still
// running when its table is dropped must not later overwrite another table's record by id.
constexpr std::string_view kMaintenanceSchema = R"sql(
CREATE TABLE maintenance_settings(
  warehouse TEXT NOT NULL REFERENCES warehouses(name),
  table_uuid TEXT NOT NULL,
  type TEXT NOT NULL,
  json TEXT NOT NULL,
  updated_ms INTEGER NOT NULL,
  PRIMARY KEY(warehouse, table_uuid, type)
) WITHOUT ROWID;

CREATE TABLE maintenance_jobs(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  warehouse TEXT NOT NULL,
  table_uuid TEXT NOT NULL,
  type TEXT NOT NULL,
  started_ms INTEGER NOT NULL,
  ended_ms INTEGER NOT NULL,
  status TEXT NOT NULL,
  json TEXT NOT NULL
);
CREATE INDEX maintenance_jobs_by_table ON maintenance_jobs(warehouse, table_uuid, type, id);
)sql";

// What tables and views own (meta/catalog_locations.h): each entity's location as a key in its
// warehouse bucket (NULL for a location outside it, which only rows from before this could hold),
// each namespace's default location key, so that an overlap is found with index lookups in the
// transaction that would make it; and indexes to find an entity by its current metadata file (S3
// may not replace or delete it) and by its uuid (unique in a warehouse: it keys maintenance).
constexpr std::string_view kLocationSchema = R"sql(
ALTER TABLE entities ADD COLUMN location_key TEXT;
UPDATE entities SET location_key = CASE
  WHEN substr(location, 1, instr(location, '://') - 1) IN ('s3', 's3a', 's3n')
   AND substr(location, instr(location, '://') + 3, length(warehouse) + 1) = warehouse || '/'
   AND rtrim(substr(location, instr(location, '://') + 3 + length(warehouse) + 1), '/') <> ''
  THEN rtrim(substr(location, instr(location, '://') + 3 + length(warehouse) + 1), '/')
END;
CREATE INDEX entities_by_location ON entities(warehouse, location_key);
CREATE INDEX entities_by_metadata_location ON entities(warehouse, metadata_location);
CREATE INDEX entities_by_uuid ON entities(warehouse, uuid);
ALTER TABLE namespaces ADD COLUMN location_key TEXT;
UPDATE namespaces SET location_key = replace(replace(CAST(path AS TEXT), '/', '_'), char(31), '/');
CREATE INDEX namespaces_by_location ON namespaces(warehouse, location_key);
)sql";

// Leases on background work (MetaStore::AcquireLease): the embedded store has one server, but it
// keeps them as a shared store does, so that the callers and the contract are one.
constexpr std::string_view kLeaseSchema = R"sql(
CREATE TABLE leases(
  name TEXT PRIMARY KEY NOT NULL,
  holder TEXT NOT NULL,
  expires_ms INTEGER NOT NULL
) WITHOUT ROWID;
)sql";

constexpr std::array<std::string_view, 7> kMigrations = {
    kInitialSchema,     kCatalogSchema,  kIamSchema,   kSharedTextSchema,
    kMaintenanceSchema, kLocationSchema, kLeaseSchema,
};

Result<int64_t> ReadUserVersion(Connection& db) {
  SERAC_ASSIGN_OR_RETURN(auto stmt, db.Prepare("PRAGMA user_version;"));
  SERAC_ASSIGN_OR_RETURN(bool row, stmt->Step());
  if (!row) return Error(ErrorCode::kIoError, "PRAGMA user_version returned no row");
  return stmt->Int(0);
}

Result<bool> ApplyNextMigrationInTransaction(Connection& db) {
  SERAC_ASSIGN_OR_RETURN(int64_t version, ReadUserVersion(db));
  const auto known = static_cast<int64_t>(Migrations().size());
  if (version > known) {
    return Error(ErrorCode::kIoError, "metadata database schema version " + std::to_string(version) +
                                          " is newer than this serac (" + std::to_string(known) + ")");
  }
  if (version == known) return false;
  std::string sql(Migrations()[static_cast<size_t>(version)]);
  // user_version cannot be a bound parameter; the value is our own integer.
  sql += "\nPRAGMA user_version = " + std::to_string(version + 1) + ";";
  SERAC_RETURN_IF_ERROR(db.Exec(sql.c_str()));
  return true;
}

// Applies the next missing migration, if any, and reports whether one was applied. The version is
// read inside the write transaction so two processes opening one file cannot both migrate.
Result<bool> ApplyNextMigration(Connection& db) {
  SERAC_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE;"));
  Result<bool> applied = ApplyNextMigrationInTransaction(db);
  Status status = applied.status();
  if (status.ok()) status = db.Exec("COMMIT;");
  if (!status.ok()) {
    if (db.InTransaction()) (void)db.Exec("ROLLBACK;");
    return status;
  }
  return applied;
}

}  // namespace

std::span<const std::string_view> Migrations() { return kMigrations; }

Status MigrateSchema(Connection& writer) {
  for (;;) {
    SERAC_ASSIGN_OR_RETURN(bool applied, ApplyNextMigration(writer));
    if (!applied) return Status::Ok();
  }
}

}  // namespace serac::meta::sqlite
