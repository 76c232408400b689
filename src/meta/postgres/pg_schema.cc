#include <array>
#include <string>

#include "meta/postgres/pg_schema_internal.h"

namespace serac::meta::postgres {
namespace {

// The same tables as the embedded back end (meta/sqlite/sqlite_schema.cc), in PostgreSQL's types:
// keys, namespace paths and entity names are bytea (ordered as raw bytes, as S3 listings require,
// and free to hold any byte); every other text that is ordered or compared by range uses the "C"
// collation, so that order is byte order whatever the database's locale. Inline object bytes stay
// in the row: PostgreSQL moves large values out of line (TOAST), so listings that do not select
// them do not read them.
constexpr std::string_view kInitialSchema = R"sql(
CREATE TABLE serac_schema(
  id integer PRIMARY KEY CHECK (id = 0),
  version bigint NOT NULL
);
INSERT INTO serac_schema(id, version) VALUES (0, 0);

CREATE TABLE buckets(
  name text COLLATE "C" PRIMARY KEY,
  created_ms bigint NOT NULL
);

CREATE TABLE objects(
  bucket text COLLATE "C" NOT NULL REFERENCES buckets(name),
  key bytea NOT NULL,
  size bigint NOT NULL,
  etag text NOT NULL,
  mtime_ms bigint NOT NULL,
  part_count bigint NOT NULL DEFAULT 0,
  headers text,
  checksum_algorithm text,
  checksum_value text,
  checksum_type text,
  inline_data bytea,
  segments text,
  pieces text,
  PRIMARY KEY(bucket, key)
);

-- Objects written in pieces (Iceberg metadata files): `pieces` lists them in order, and the bytes
-- of shared pieces live once in shared_texts, found by digest, for as long as one object uses them.
-- Their use counts are a table of their own so that counting a use rewrites a small row, not the
-- bytes.
CREATE TABLE shared_texts(
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sha256 bytea NOT NULL UNIQUE,
  bytes bytea NOT NULL
);

CREATE TABLE shared_text_uses(
  id bigint PRIMARY KEY,
  uses bigint NOT NULL
);

CREATE TABLE uploads(
  upload_id text COLLATE "C" PRIMARY KEY,
  bucket text COLLATE "C" NOT NULL REFERENCES buckets(name),
  key bytea NOT NULL,
  initiated_ms bigint NOT NULL,
  headers text,
  checksum_algorithm text NOT NULL DEFAULT '',
  checksum_type text NOT NULL DEFAULT ''
);
CREATE INDEX uploads_by_key ON uploads(bucket, key, upload_id);

CREATE TABLE parts(
  upload_id text COLLATE "C" NOT NULL REFERENCES uploads(upload_id) ON DELETE CASCADE,
  part_number bigint NOT NULL,
  size bigint NOT NULL,
  etag text NOT NULL,
  mtime_ms bigint NOT NULL,
  blob_id text NOT NULL,
  checksum_value text NOT NULL DEFAULT '',
  PRIMARY KEY(upload_id, part_number)
);

CREATE TABLE gc_queue(
  blob_id text COLLATE "C" PRIMARY KEY,
  queued_ms bigint NOT NULL
);
CREATE INDEX gc_queue_by_age ON gc_queue(queued_ms, blob_id);

CREATE TABLE warehouses(
  name text COLLATE "C" PRIMARY KEY REFERENCES buckets(name),
  created_ms bigint NOT NULL
);

CREATE TABLE namespaces(
  warehouse text COLLATE "C" NOT NULL REFERENCES warehouses(name),
  path bytea NOT NULL,
  parent bytea NOT NULL,
  last_level bytea NOT NULL,
  properties text NOT NULL,
  created_ms bigint NOT NULL,
  location_key text COLLATE "C" NOT NULL,
  PRIMARY KEY(warehouse, path)
);
CREATE INDEX namespaces_by_parent ON namespaces(warehouse, parent, last_level);
CREATE INDEX namespaces_by_location ON namespaces(warehouse, location_key);

CREATE TABLE entities(
  warehouse text COLLATE "C" NOT NULL,
  namespace bytea NOT NULL,
  name bytea NOT NULL,
  kind bigint NOT NULL,
  uuid text COLLATE "C" NOT NULL,
  location text NOT NULL,
  metadata_location text COLLATE "C" NOT NULL,
  created_ms bigint NOT NULL,
  updated_ms bigint NOT NULL,
  location_key text COLLATE "C",
  PRIMARY KEY(warehouse, namespace, name),
  FOREIGN KEY(warehouse, namespace) REFERENCES namespaces(warehouse, path)
);
CREATE INDEX entities_by_kind ON entities(warehouse, namespace, kind, name);
CREATE INDEX entities_by_location ON entities(warehouse, location_key);
CREATE INDEX entities_by_metadata_location ON entities(warehouse, metadata_location);
CREATE INDEX entities_by_uuid ON entities(warehouse, uuid);

CREATE TABLE maintenance_settings(
  warehouse text COLLATE "C" NOT NULL REFERENCES warehouses(name),
  table_uuid text COLLATE "C" NOT NULL,
  type text COLLATE "C" NOT NULL,
  json text NOT NULL,
  updated_ms bigint NOT NULL,
  PRIMARY KEY(warehouse, table_uuid, type)
);

CREATE TABLE maintenance_jobs(
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  warehouse text COLLATE "C" NOT NULL,
  table_uuid text COLLATE "C" NOT NULL,
  type text COLLATE "C" NOT NULL,
  started_ms bigint NOT NULL,
  ended_ms bigint NOT NULL,
  status text NOT NULL,
  json text NOT NULL
);
CREATE INDEX maintenance_jobs_by_table ON maintenance_jobs(warehouse, table_uuid, type, id);

CREATE TABLE iam_users(
  name text COLLATE "C" PRIMARY KEY,
  enabled boolean NOT NULL,
  created_ms bigint NOT NULL
);

CREATE TABLE iam_access_keys(
  access_key text COLLATE "C" PRIMARY KEY,
  user_name text COLLATE "C" NOT NULL REFERENCES iam_users(name),
  sealed_secret bytea NOT NULL,
  enabled boolean NOT NULL,
  created_ms bigint NOT NULL,
  description text NOT NULL
);
CREATE INDEX iam_access_keys_by_user ON iam_access_keys(user_name, access_key);

CREATE TABLE iam_policies(
  name text COLLATE "C" PRIMARY KEY,
  document text NOT NULL,
  created_ms bigint NOT NULL,
  updated_ms bigint NOT NULL
);

CREATE TABLE iam_attachments(
  user_name text COLLATE "C" NOT NULL REFERENCES iam_users(name),
  policy_name text COLLATE "C" NOT NULL,
  PRIMARY KEY(user_name, policy_name)
);
CREATE INDEX iam_attachments_by_policy ON iam_attachments(policy_name, user_name);

-- Leases on background work (MetaStore::AcquireLease), timed by the database's clock so that
-- servers whose clocks differ agree on when one ends.
CREATE TABLE leases(
  name text COLLATE "C" PRIMARY KEY,
  holder text NOT NULL,
  expires_ms bigint NOT NULL
);

CREATE TABLE iam_generation(
  id integer PRIMARY KEY CHECK (id = 0),
  generation bigint NOT NULL
);
INSERT INTO iam_generation(id, generation) VALUES (0, 0);
)sql";

// Every write transaction leaves a random token here, so that one whose COMMIT answer was lost
// across a restart of PostgreSQL (or a fail-over) is found out by its token: a transaction id can
// be handed out again after a crash, when the one it named never reached the log. A token is the
// write's start time (8 bytes, big-endian milliseconds) and 8 random bytes, so that its one index
// also orders tokens by age: those older than limits::kPostgresWriteTokenAge are deleted now and
// then by a range of it, and new ones go to its right edge.
constexpr std::string_view kWriteTokenSchema = R"sql(
CREATE TABLE serac_write_tokens(
  token bytea PRIMARY KEY
);
)sql";

constexpr std::array<std::string_view, 2> kMigrations = {kInitialSchema, kWriteTokenSchema};

// Any constant names the lock; this one spells "serac" so that pg_locks says whose it is.
constexpr int64_t kMigrationLockKey = 0x7365726163;

}  // namespace

std::span<const std::string_view> Migrations() { return kMigrations; }

Result<int64_t> SchemaVersion(PgConnection& db) {
  // A scan of pg_class, not to_regclass: a name lookup may answer from a cache that still says
  // "no such table" after another server's migration committed while this one waited for the lock.
  // current_schema() is where the migrations created the tables (the first of search_path).
  SERAC_ASSIGN_OR_RETURN(PgRows table,
                         db.Query("SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN "
                                  "pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE "
                                  "c.relname = 'serac_schema' AND n.nspname = current_schema())"));
  if (!table.Bool(0, 0)) return int64_t{0};
  SERAC_ASSIGN_OR_RETURN(PgRows rows, db.Query("SELECT version FROM serac_schema WHERE id = 0"));
  const int64_t version = rows.empty() ? 0 : rows.Int(0, 0);
  const auto known = static_cast<int64_t>(Migrations().size());
  if (version > known) {
    return Error(ErrorCode::kIoError, "the PostgreSQL metadata schema is at version " +
                                          std::to_string(version) + ", newer than this serac knows (" +
                                          std::to_string(known) + "): upgrade serac on this node");
  }
  return version;
}

Status MigrateSchema(PgEngine& engine) {
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> db, engine.Acquire());
  Result<int64_t> version = SchemaVersion(*db);
  const auto known = static_cast<int64_t>(Migrations().size());
  if (!version.ok() || *version == known) {
    engine.Release(std::move(db));
    return version.status();
  }
  // Several servers may start at once: the first to take the lock migrates, the others then find
  // the version current. The lock ends with the transaction.
  Status status = db->Exec("BEGIN").status();
  if (status.ok()) {
    status = db->Query("SELECT pg_advisory_xact_lock($1)", {PgParam::Int(kMigrationLockKey)}).status();
  }
  if (status.ok()) {
    version = SchemaVersion(*db);
    status = version.status();
  }
  for (int64_t next = status.ok() ? *version : known; status.ok() && next < known; ++next) {
    status = db->Exec(std::string(Migrations()[static_cast<size_t>(next)])).status();
    if (status.ok()) {
      status =
          db->Query("UPDATE serac_schema SET version = $1 WHERE id = 0", {PgParam::Int(next + 1)}).status();
    }
  }
  if (status.ok()) status = db->Exec("COMMIT").status();
  engine.Release(std::move(db));  // rolls back after an error
  return status;
}

}  // namespace serac::meta::postgres
