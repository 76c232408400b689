// Metadata files as objects in the warehouse bucket (catalog_metadata_io.cc): written, read,
// parsed through the caches, purged with their table, and what a commit may add.
// Private to catalog/.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "iceberg/metadata/table_metadata.h"
#include "meta/catalog_store.h"

namespace serac::maintenance {
struct ListedFile;
}  // namespace serac::maintenance

namespace serac::catalog {

// Writes a new metadata file (never overwrites: kPreconditionFailed if it exists).
Status WriteMetadataFile(Backend& backend, const std::string& location, const std::string& json);
// The object record of a new metadata file, not yet in the index: small files are inline, larger
// ones are written (durably) to a blob first. The caller stores it, e.g. in a
// CatalogStore::CommitMetadata, or calls DiscardMetadataFileRecord when it does not.
Result<meta::ObjectRecord> MetadataFileRecord(Backend& backend, const std::string& location,
                                              const std::string& json);
void DiscardMetadataFileRecord(Backend& backend, const meta::ObjectRecord& record);
// The record of a new table metadata file given as iceberg::TableMetadata::ToJsonPieces cut it: the history
// chunks are stored once for every file that repeats them, so a commit stores and hashes only what is new.
// Its ETag is the MD5 of the pieces' MD5s followed by "-<pieces>", as S3 gives objects uploaded in parts.
// Without chunks, or when the rest would not fit the index row, it is MetadataFileRecord of the joined text.
Result<meta::ObjectRecord> TableMetadataFileRecord(Backend& backend, const std::string& location,
                                                   const std::vector<iceberg::MetadataTextPiece>& pieces);
// Removes a metadata file written by a failed attempt; errors are only logged.
void DeleteMetadataFileQuietly(Backend& backend, const std::string& location);
Result<std::string> ReadMetadataFile(Backend& backend, const std::string& location);
Result<std::shared_ptr<const iceberg::TableMetadata>> LoadTableMetadata(Backend& backend,
                                                                        const std::string& location);
Result<std::shared_ptr<const iceberg::ViewMetadata>> LoadViewMetadata(Backend& backend,
                                                                      const std::string& location);
// Deletes every object a dropped table or view owned: those below its location's key in its
// warehouse's bucket (blobs go to the GC queue). A location that owns nothing (one outside the
// warehouse, from before locations were confined) purges nothing: kValidationFailed.
Status PurgeLocation(Backend& backend, const meta::EntityRecord& dropped);
// Every object whose location starts with `prefix` ("s3://bucket/key-prefix"), for the
// unreferenced-file job (maintenance/remove_unreferenced_files.h).
Result<std::vector<maintenance::ListedFile>> ListTableFiles(Backend& backend, const std::string& prefix);
// 400 unless what the snapshots `after` adds over `before` add is the table's own: the manifests a
// new snapshot's manifest list adds, and the data and delete files those manifests add, wherever
// they are in serac's storage, must be below `owned_key`. Files that are not there (yet) are not
// looked into: every later read or delete of them is confined anyway (MakeTableFileIO).
HandlerResult RequireAddedFilesOwned(Backend& backend, std::string_view warehouse,
                                     const std::string& owned_key, std::string_view display_name,
                                     const iceberg::TableMetadata* before,
                                     const iceberg::TableMetadata& after);
// The metadata files (bucket, key) a commit from `before` to `after` drops from the history when
// write.metadata.delete-after-commit.enabled is set, and only those the table owns (below
// `owned_key` in `warehouse`): a metadata log may name any file; empty otherwise.
std::vector<std::pair<std::string, std::string>> TrimmedMetadataFiles(const iceberg::TableMetadata& before,
                                                                      const std::string& before_location,
                                                                      const iceberg::TableMetadata& after,
                                                                      std::string_view warehouse,
                                                                      std::string_view owned_key);

}  // namespace serac::catalog
