// Pure request rules (catalog_rules.cc): names, namespaces, locations, page tokens, ETags — what a
// request may say, decided without any store.
// Private to catalog/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog_errors_internal.h"
#include "iceberg/metadata/table_metadata.h"
#include "meta/catalog_store.h"
#include "service/query_params.h"

namespace serac::catalog {

using service::QueryParams;  // the query string, decoded: service/query_params.h

// "true"/"false" in any letter case; nullopt for anything else.
std::optional<bool> ParseBoolean(std::string_view text);
// Splits a decoded namespace path segment on 0x1F (the %1F separator). Empty levels are refused.
std::optional<meta::NamespaceLevels> SplitNamespace(std::string_view decoded);
// "a.b" for messages.
std::string NamespaceDisplayName(const meta::NamespaceLevels& levels);
// Why a namespace level list is unacceptable (empty, empty level, 0x1F, not UTF-8), if it is.
std::optional<std::string> NamespaceProblem(const meta::NamespaceLevels& levels);
// Why a table or view name is unacceptable, if it is.
std::optional<std::string> EntityNameProblem(std::string_view name);
// S3 bucket naming rules plus the words that name catalog routes ("namespaces", ...).
std::optional<std::string> WarehouseNameProblem(std::string_view name);
// True for the first path segments after /v1 that are routes, never a {prefix}.
bool IsReservedPrefixWord(std::string_view segment);

struct S3Location {
  std::string bucket;
  std::string key;  // without leading '/', may be empty
};
// "s3://bucket/key" (also s3a:// and s3n://); nullopt otherwise.
std::optional<S3Location> ParseS3Location(std::string_view location);
// s3://<warehouse>/<meta::NamespaceLocationKey>: the directory under which the namespace's tables
// get their default locations.
std::string DefaultNamespaceLocation(std::string_view warehouse, const meta::NamespaceLevels& levels);
// s3://<warehouse>/<levels joined by '/'>/<name>-<32 hex>, each part a meta::LocationSegment:
// unique for every entity ever created, whatever its name holds.
std::string DefaultEntityLocation(std::string_view warehouse, const meta::NamespaceLevels& levels,
                                  std::string_view name);
// The key below which the table or view at `location` owns every object (meta::LocationKeyIn); a
// 400 naming `what` and the location when it is no such place in the warehouse.
HandlerResult OwnedKey(std::string_view warehouse, std::string_view what, const std::string& location,
                       std::string& key);
// 400 unless every place in serac's storage (s3:// and its aliases) that `after` names and
// `before` (null: none) does not — manifest lists, statistics files, write.*.path properties
// (iceberg::TableMetadata::LocationsAddedSince) — is below `owned_key`, the table
// `display_name`'s location key.
HandlerResult RequireLocationsOwned(std::string_view warehouse, const std::string& owned_key,
                                    std::string_view display_name, const iceberg::TableMetadata* before,
                                    const iceberg::TableMetadata& after);
// The client's location without trailing slashes, if it is below the warehouse bucket (not the
// bucket root itself, so a purge can never remove the whole warehouse); nullopt otherwise.
std::optional<std::string> ClientLocationInWarehouse(std::string_view location, std::string_view warehouse);

// Page tokens are the last name of the previous page, opaque to clients.
std::string EncodePageToken(std::string_view last_name);
std::optional<std::string> DecodePageToken(std::string_view token);
// True if an If-None-Match header value (entity-tag list or "*") matches `etag` (quoted).
bool IfNoneMatchMatches(std::string_view header, std::string_view etag);

// What a parsed metadata document costs in memory, estimated from its JSON text: the Json trees
// of its snapshots and schemas take a few times the bytes of their text, and each snapshot also
// keeps its own text.
inline uint64_t ParsedMetadataBytes(size_t text_bytes) {
  return 5 * static_cast<uint64_t>(text_bytes) + 4096;
}

// A table document's JSON text as loads send it: one piece when serialised for a load, or the
// pieces a commit cut it into (whose history chunks versions of the table share).
using TableText = std::vector<iceberg::MetadataTextPiece>;

}  // namespace serac::catalog
