#include "client/catalog_requests.h"

#include <nlohmann/json.hpp>

#include "common/encoding.h"

namespace serac::client {
namespace {

using Json = nlohmann::json;

// Command-line text need not be UTF-8; replacing bad bytes beats dump() throwing.
std::string Dump(const Json& json) { return json.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string Segment(std::string_view text) { return UriEncode(text, true); }

std::string WarehousePath(std::string_view warehouse) {
  return std::string(kCatalogBasePath) + "/v1/" + Segment(warehouse);
}

std::string NamespacePath(std::string_view warehouse, const NamespaceLevels& levels) {
  return WarehousePath(warehouse) + "/namespaces/" + EncodeNamespace(levels);
}

std::string EntityCollection(EntityKind kind) { return kind == EntityKind::kTable ? "/tables" : "/views"; }

std::string PageQuery(std::string_view page_token) {
  return page_token.empty() ? "" : "pageToken=" + Segment(page_token);
}

Json PropertiesJson(const Properties& properties) {
  Json object = Json::object();
  for (const auto& [key, value] : properties) object[key] = value;
  return object;
}

Json IdentifierJson(const QualifiedName& name) {
  return Json{{"namespace", name.levels}, {"name", name.name}};
}

Result<Json> ParseObject(std::string_view text, std::string_view what) {
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Error(ErrorCode::kInvalidArgument, std::string(what) + " must be a JSON object");
  }
  return parsed;
}

}  // namespace

Result<NamespaceLevels> ParseNamespace(std::string_view dotted) {
  NamespaceLevels levels;
  while (true) {
    size_t dot = dotted.find('.');
    std::string_view level = dotted.substr(0, dot);
    if (level.empty()) {
      return Error(ErrorCode::kInvalidArgument,
                   "namespace levels may not be empty: '" + std::string(dotted) + "'");
    }
    levels.emplace_back(level);
    if (dot == std::string_view::npos) break;
    dotted.remove_prefix(dot + 1);
  }
  return levels;
}

std::string EncodeNamespace(const NamespaceLevels& levels) {
  std::string encoded;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (i > 0) encoded += "%1F";
    encoded += Segment(levels[i]);
  }
  return encoded;
}

Result<QualifiedName> ParseQualifiedName(std::string_view dotted) {
  size_t dot = dotted.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == dotted.size()) {
    return Error(ErrorCode::kInvalidArgument, "expected NAMESPACE.NAME, got '" + std::string(dotted) + "'");
  }
  QualifiedName qualified;
  SERAC_ASSIGN_OR_RETURN(qualified.levels, ParseNamespace(dotted.substr(0, dot)));
  qualified.name = std::string(dotted.substr(dot + 1));
  return qualified;
}

Result<std::pair<std::string, std::string>> ParseProperty(std::string_view text) {
  size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    return Error(ErrorCode::kInvalidArgument, "expected KEY=VALUE, got '" + std::string(text) + "'");
  }
  return std::make_pair(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
}

Result<Properties> ParseProperties(const std::vector<std::string>& texts) {
  Properties properties;
  for (const std::string& text : texts) {
    SERAC_ASSIGN_OR_RETURN(auto property, ParseProperty(text));
    if (!properties.insert(property).second) {
      return Error(ErrorCode::kInvalidArgument, "property given twice: " + property.first);
    }
  }
  return properties;
}

std::string_view EntityWord(EntityKind kind) { return kind == EntityKind::kTable ? "table" : "view"; }

ApiRequest CreateWarehouseRequest(std::string_view name, bool upgrade_existing) {
  Json body = {{"name", name}};
  if (upgrade_existing) body["upgrade-existing"] = true;
  return {"POST", std::string(kCatalogBasePath) + "/v1/warehouses", "", Dump(body)};
}

ApiRequest ListWarehousesRequest(std::string_view page_token) {
  return {"GET", std::string(kCatalogBasePath) + "/v1/warehouses", PageQuery(page_token), ""};
}

ApiRequest RemoveWarehouseRequest(std::string_view name, bool force, bool preserve_bucket) {
  std::string query = std::string("force=") + (force ? "true" : "false") +
                      "&preserve-bucket=" + (preserve_bucket ? "true" : "false");
  return {"DELETE", std::string(kCatalogBasePath) + "/v1/warehouses/" + Segment(name), query, ""};
}

ApiRequest CreateNamespaceRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                  const Properties& properties) {
  Json body = {{"namespace", levels}, {"properties", PropertiesJson(properties)}};
  return {"POST", WarehousePath(warehouse) + "/namespaces", "", Dump(body)};
}

ApiRequest ListNamespacesRequest(std::string_view warehouse, const NamespaceLevels& parent,
                                 std::string_view page_token) {
  std::string query = PageQuery(page_token);
  if (!parent.empty()) query = "parent=" + EncodeNamespace(parent) + (query.empty() ? "" : "&" + query);
  return {"GET", WarehousePath(warehouse) + "/namespaces", query, ""};
}

ApiRequest LoadNamespaceRequest(std::string_view warehouse, const NamespaceLevels& levels) {
  return {"GET", NamespacePath(warehouse, levels), "", ""};
}

ApiRequest DropNamespaceRequest(std::string_view warehouse, const NamespaceLevels& levels) {
  return {"DELETE", NamespacePath(warehouse, levels), "", ""};
}

ApiRequest UpdateNamespaceRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                  const Properties& updates, const std::vector<std::string>& removals) {
  Json body = {{"updates", PropertiesJson(updates)}, {"removals", removals}};
  return {"POST", NamespacePath(warehouse, levels) + "/properties", "", Dump(body)};
}

ApiRequest ListEntitiesRequest(EntityKind kind, std::string_view warehouse, const NamespaceLevels& levels,
                               std::string_view page_token) {
  return {"GET", NamespacePath(warehouse, levels) + EntityCollection(kind), PageQuery(page_token), ""};
}

ApiRequest LoadEntityRequest(EntityKind kind, std::string_view warehouse, const NamespaceLevels& levels,
                             std::string_view name) {
  return {"GET", NamespacePath(warehouse, levels) + EntityCollection(kind) + "/" + Segment(name), "", ""};
}

ApiRequest DropEntityRequest(EntityKind kind, std::string_view warehouse, const NamespaceLevels& levels,
                             std::string_view name, bool purge) {
  ApiRequest request = {
      "DELETE", NamespacePath(warehouse, levels) + EntityCollection(kind) + "/" + Segment(name), "", ""};
  if (purge && kind == EntityKind::kTable) request.query = "purgeRequested=true";
  return request;
}

ApiRequest RenameEntityRequest(EntityKind kind, std::string_view warehouse, const QualifiedName& from,
                               const QualifiedName& to) {
  Json body = {{"source", IdentifierJson(from)}, {"destination", IdentifierJson(to)}};
  return {"POST", WarehousePath(warehouse) + EntityCollection(kind) + "/rename", "", Dump(body)};
}

Result<ApiRequest> CreateTableRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                      std::string_view name, std::string_view schema_json,
                                      std::string_view partition_spec_json, const Properties& properties) {
  Json body = {{"name", name}};
  SERAC_ASSIGN_OR_RETURN(body["schema"], ParseObject(schema_json, "--schema"));
  if (!partition_spec_json.empty()) {
    SERAC_ASSIGN_OR_RETURN(body["partition-spec"], ParseObject(partition_spec_json, "--partition-spec"));
  }
  if (!properties.empty()) body["properties"] = PropertiesJson(properties);
  return ApiRequest{"POST", NamespacePath(warehouse, levels) + "/tables", "", Dump(body)};
}

namespace {

std::string WarehouseAdminPath(std::string_view warehouse) {
  return std::string(kCatalogBasePath) + "/v1/warehouses/" + Segment(warehouse);
}

std::string TableMaintenancePath(std::string_view warehouse, const NamespaceLevels& levels,
                                 std::string_view table, std::string_view type) {
  std::string path = WarehouseAdminPath(warehouse) + "/namespaces/" + EncodeNamespace(levels) + "/tables/" +
                     Segment(table) + "/maintenance";
  if (!type.empty()) path += "/" + Segment(type);
  return path;
}

}  // namespace

ApiRequest WarehouseMaintenanceRequest(std::string_view warehouse) {
  return {"GET", WarehouseAdminPath(warehouse) + "/maintenance", "", ""};
}

ApiRequest PutWarehouseMaintenanceRequest(std::string_view warehouse, std::string_view type,
                                          std::string value_json) {
  return {"PUT", WarehouseAdminPath(warehouse) + "/maintenance/" + Segment(type), "", std::move(value_json)};
}

ApiRequest TableMaintenanceRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                   std::string_view table, std::string_view type) {
  return {"GET", TableMaintenancePath(warehouse, levels, table, type), "", ""};
}

ApiRequest PutTableMaintenanceRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                      std::string_view table, std::string_view type, std::string value_json) {
  return {"PUT", TableMaintenancePath(warehouse, levels, table, type), "", std::move(value_json)};
}

ApiRequest TableMaintenanceStatusRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                         std::string_view table, std::string_view type) {
  return {"GET", TableMaintenancePath(warehouse, levels, table, type) + "/status", "", ""};
}

ApiRequest RunTableMaintenanceRequest(std::string_view warehouse, const NamespaceLevels& levels,
                                      std::string_view table, std::string_view type, std::string body_json) {
  return {"POST", TableMaintenancePath(warehouse, levels, table, type) + "/run", "", std::move(body_json)};
}

}  // namespace serac::client
