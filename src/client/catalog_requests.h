// Pure mapping from command-line arguments to catalog API requests (path, query, JSON body), so
// the encoding rules can be tested without a server. Paths are raw (already percent-encoded).
// Thread-safe: free functions without state.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace serac::client {

inline constexpr std::string_view kCatalogBasePath = "/_iceberg";

struct ApiRequest {
  std::string method;
  std::string path;   // raw, e.g. "/_iceberg/v1/wh/namespaces/a%1Fb"
  std::string query;  // raw, without '?'
  std::string body;   // JSON or empty
  // false: the catalog's signing (service s3tables, generic URI encoding); true: S3-style signing
  // (service s3, S3 URI encoding), as serac's admin API verifies it.
  bool s3_signing = false;
};

using NamespaceLevels = std::vector<std::string>;
using Properties = std::map<std::string, std::string>;

// "a.b" → {"a", "b"}. kInvalidArgument for an empty name or an empty level ("a..b", ".a").
Result<NamespaceLevels> ParseNamespace(std::string_view dotted);
// Levels percent-encoded one by one and joined with the unit separator, encoded as %1F.
std::string EncodeNamespace(const NamespaceLevels& levels);
// "a.b.t" → namespace {"a","b"}, name "t" (split at the last dot).
struct QualifiedName {
  NamespaceLevels levels;
  std::string name;
};
Result<QualifiedName> ParseQualifiedName(std::string_view dotted);
// "k=v" → {"k", "v"}; the value may be empty or contain '='; the key may not be empty.
Result<std::pair<std::string, std::string>> ParseProperty(std::string_view text);
// Every "k=v"; kInvalidArgument for a malformed one or a key given twice.
Result<Properties> ParseProperties(const std::vector<std::string>& texts);

enum class EntityKind { kTable, kView };
std::string_view EntityWord(EntityKind kind);  // "table" / "view"

// Warehouse admin API.
ApiRequest CreateWarehouseRequest(std::string_view name, bool upgrade_existing);
ApiRequest ListWarehousesRequest(std::string_view page_token);
ApiRequest RemoveWarehouseRequest(std::string_view name, bool force, bool preserve_bucket);

// Namespaces.
ApiRequest CreateNamespaceRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                  const Properties& properties);
ApiRequest ListNamespacesRequest(std::string_view warehouse, const NamespaceLevels& parent,
                                 std::string_view page_token);
ApiRequest LoadNamespaceRequest(std::string_view warehouse, const NamespaceLevels& levels);
ApiRequest DropNamespaceRequest(std::string_view warehouse, const NamespaceLevels& levels);
ApiRequest UpdateNamespaceRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                  const Properties& updates, const std::vector<std::string>& removals);

// Tables and views.
ApiRequest ListEntitiesRequest(EntityKind kind, std::string_view warehouse, const NamespaceLevels& levels,
                               std::string_view page_token);
ApiRequest LoadEntityRequest(EntityKind kind, std::string_view warehouse, const NamespaceLevels& levels,
                             std::string_view name);
ApiRequest DropEntityRequest(EntityKind kind, std::string_view warehouse, const NamespaceLevels& levels,
                             std::string_view name, bool purge);
ApiRequest RenameEntityRequest(EntityKind kind, std::string_view warehouse, const QualifiedName& from,
                               const QualifiedName& to);
// kInvalidArgument when schema_json (required) or partition_spec_json (optional, "" = none) is not
// a JSON object.
Result<ApiRequest> CreateTableRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                      std::string_view name, std::string_view schema_json,
                                      std::string_view partition_spec_json, const Properties& properties);

// The maintenance API (AIStor's paths): a warehouse's defaults (`type` empty: every type), a
// table's effective settings and overrides, its job status and history, and starting a job now.
// `value_json` is one type's {"status": ..., "settings": {...}}.
ApiRequest WarehouseMaintenanceRequest(std::string_view warehouse);
ApiRequest PutWarehouseMaintenanceRequest(std::string_view warehouse, std::string_view type,
                                          std::string value_json);
ApiRequest TableMaintenanceRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                   std::string_view table, std::string_view type);
ApiRequest PutTableMaintenanceRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                      std::string_view table, std::string_view type, std::string value_json);
ApiRequest TableMaintenanceStatusRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                         std::string_view table, std::string_view type);
// `body_json`: what the run takes instead of the settings (catalog_maintenance.cc's ParseRunOptions:
// {"olderThanSeconds": N}, {"retainLast": N}, {"snapshotIds": [...]}, ...).
ApiRequest RunTableMaintenanceRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                      std::string_view table, std::string_view type,
                                      std::string body_json = "{}");

}  // namespace serac::client
