// Namespace routes, and the listings of namespaces, tables and views (CollectListing in
// catalog_responses_internal.h).
#include <set>

#include "catalog/catalog_access_internal.h"
#include "catalog/catalog_context_internal.h"
#include "catalog/catalog_errors_internal.h"
#include "catalog/catalog_namespaces_internal.h"
#include "catalog/catalog_responses_internal.h"
#include "catalog/catalog_routes_internal.h"
#include "catalog/catalog_rules_internal.h"
#include "common/clock.h"
#include "common/json_reads.h"
#include "common/limits.h"

namespace serac::catalog {
namespace {

Json PropertiesToJson(const std::map<std::string, std::string>& properties) {
  Json json = Json::object();
  for (const auto& [key, value] : properties) json[key] = value;
  return json;
}

// The properties a namespace is shown with: the stored ones, plus `location` (where its tables go
// by default) unless one is stored. Trino creates a table without a staged create, and then
// refuses the non-empty table directory, unless the namespace names a location; the reference
// catalog shows one too.
Json NamespacePropertiesToJson(std::string_view warehouse, const meta::NamespaceRecord& record) {
  Json json = PropertiesToJson(record.properties);
  if (!json.contains("location")) json["location"] = DefaultNamespaceLocation(warehouse, record.levels);
  return json;
}

HandlerResult ReadLevels(const Json& value, meta::NamespaceLevels& levels) {
  if (!value.is_array()) return BadRequest("namespace must be an array of strings");
  levels.clear();
  for (const Json& level : value) {
    if (!level.is_string()) return BadRequest("namespace must be an array of strings");
    levels.push_back(level.get<std::string>());
  }
  if (auto problem = NamespaceProblem(levels)) return BadRequest(*problem);
  return kHandled;
}

HandlerResult ReadStringList(const Json& body, const char* key, std::vector<std::string>& out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return kHandled;
  if (!it->is_array()) return BadRequest(std::string(key) + " must be an array of strings");
  for (const Json& item : *it) {
    if (!item.is_string()) return BadRequest(std::string(key) + " must be an array of strings");
    out.push_back(item.get<std::string>());
  }
  return kHandled;
}

HandlerResult ReadProperties(const Json& body, const char* key, std::map<std::string, std::string>& out) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return kHandled;
  auto properties = StringMap(*it);
  if (!properties.ok()) return BadRequest(std::string(key) + ": " + properties.status().message());
  out = std::move(properties).value();
  return kHandled;
}

}  // namespace

Json NamespaceToJson(const meta::NamespaceLevels& levels) {
  Json json = Json::array();
  for (const std::string& level : levels) json.push_back(level);
  return json;
}

HandlerResult ParseIdentifier(const Json& json, meta::NamespaceLevels& levels, std::string& name) {
  if (!json.is_object()) return BadRequest("identifier must be an object with namespace and name");
  auto ns = json.find("namespace");
  if (ns == json.end()) return BadRequest("identifier needs a namespace");
  if (auto error = ReadLevels(*ns, levels)) return error;
  auto parsed_name = RequiredString(json, "name");
  if (!parsed_name.ok()) return BadRequest(parsed_name.status().message());
  if (auto problem = EntityNameProblem(*parsed_name)) return BadRequest(*problem);
  name = std::move(parsed_name).value();
  return kHandled;
}

HandlerResult ListNamespaces(RequestContext& ctx) {
  Paging paging;
  if (auto error = ReadPaging(ctx, paging)) return error;
  meta::NamespaceLevels parent;
  if (const std::string* text = ctx.query.Find("parent"); text != nullptr && !text->empty()) {
    auto levels = SplitNamespace(*text);
    if (!levels) return BadRequest("malformed parent namespace");
    parent = std::move(*levels);
  }
  // A caller allowed to list at this level sees every child it may list or get; one that is not
  // still sees those children, and is refused only when there are none.
  const bool may_list_level = IsAllowed(ctx, ctx.action, auth::TablesWarehouseArn(ctx.path.warehouse),
                                        CatalogConditions(ctx, parent));
  size_t visible_count = 0;
  auto visible = [&](const meta::NamespaceRecord& record) {
    const std::string warehouse_arn = auth::TablesWarehouseArn(ctx.path.warehouse);
    const auth::ConditionContext conditions = CatalogConditions(ctx, record.levels);
    const bool shown = IsAllowed(ctx, actions::kListNamespaces, warehouse_arn, conditions) ||
                       IsAllowed(ctx, actions::kGetNamespace, warehouse_arn, conditions);
    visible_count += shown ? 1 : 0;
    return shown;
  };
  auto fetch = [&](const std::string& start_after, uint32_t limit) {
    return ctx.catalog().ListNamespaces(ctx.path.warehouse, parent, start_after, limit);
  };
  auto key = [](const meta::NamespaceRecord& record) { return record.levels.back(); };
  auto to_json = [](const meta::NamespaceRecord& record) { return NamespaceToJson(record.levels); };
  Json listing;
  HandlerResult error = CollectListing("namespaces", paging, fetch, key, to_json, visible,
                                       NoSuchNamespace(NamespaceDisplayName(parent)), listing);
  // Refused callers learn nothing, not even whether the parent exists.
  if (!may_list_level && (error || visible_count == 0)) {
    return Authorize(ctx, ctx.action, auth::TablesWarehouseArn(ctx.path.warehouse),
                     CatalogConditions(ctx, parent));
  }
  if (error) return error;
  return SendJson(ctx, listing);
}

HandlerResult CreateNamespace(RequestContext& ctx) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  meta::NamespaceRecord record;
  record.warehouse = ctx.path.warehouse;
  auto ns = body.find("namespace");
  if (ns == body.end()) return BadRequest("missing field: namespace");
  if (auto error = ReadLevels(*ns, record.levels)) return error;
  if (auto error = AuthorizeInWarehouse(ctx, ctx.action, record.levels)) return error;
  if (auto error = ReadProperties(body, "properties", record.properties)) return error;
  record.created_ms = ToUnixMillis(Now());
  const std::string display = NamespaceDisplayName(record.levels);
  Status created = ctx.catalog().CreateNamespace(record);
  if (!created.ok()) {
    if (created.code() == ErrorCode::kAlreadyExists) {
      return MakeError(409, "AlreadyExistsException", "Namespace already exists: " + display);
    }
    meta::NamespaceLevels parent(record.levels.begin(), record.levels.end() - 1);
    if (created.code() == ErrorCode::kNotFound) {
      // The specification documents 400 and 409 for createNamespace, no 404: a request naming a
      // parent that is not there is a bad request.
      return BadRequest("Cannot create namespace " + display +
                        ": parent namespace does not exist: " + NamespaceDisplayName(parent));
    }
    return ErrorFromStatus(created, NoSuchNamespace(NamespaceDisplayName(parent)));
  }
  return SendJson(ctx, Json{{"namespace", NamespaceToJson(record.levels)},
                            {"properties", NamespacePropertiesToJson(ctx.path.warehouse, record)}});
}

HandlerResult LoadNamespace(RequestContext& ctx) {
  auto found = ctx.catalog().GetNamespace(ctx.path.warehouse, ctx.path.levels);
  if (!found.ok())
    return ErrorFromStatus(found.status(), NoSuchNamespace(NamespaceDisplayName(ctx.path.levels)));
  return SendJson(ctx, Json{{"namespace", NamespaceToJson(found->levels)},
                            {"properties", NamespacePropertiesToJson(ctx.path.warehouse, *found)}});
}

HandlerResult NamespaceExists(RequestContext& ctx) {
  auto found = ctx.catalog().GetNamespace(ctx.path.warehouse, ctx.path.levels);
  if (!found.ok())
    return ErrorFromStatus(found.status(), NoSuchNamespace(NamespaceDisplayName(ctx.path.levels)));
  return SendNoContent(ctx);
}

HandlerResult DropNamespace(RequestContext& ctx) {
  const std::string display = NamespaceDisplayName(ctx.path.levels);
  Status dropped = ctx.catalog().DropNamespace(ctx.path.warehouse, ctx.path.levels);
  if (!dropped.ok()) {
    if (dropped.code() == ErrorCode::kNotEmpty) {
      return MakeError(409, "NamespaceNotEmptyException", "Namespace is not empty: " + display);
    }
    return ErrorFromStatus(dropped, NoSuchNamespace(display));
  }
  return SendNoContent(ctx);
}

HandlerResult UpdateNamespaceProperties(RequestContext& ctx) {
  Json body;
  if (auto error = ParseJsonObject(ctx, body)) return error;
  meta::NamespacePropertiesChange change;
  if (auto error = ReadStringList(body, "removals", change.removals)) return error;
  if (auto error = ReadProperties(body, "updates", change.updates)) return error;
  std::set<std::string> both;
  for (const std::string& key : change.removals) {
    if (change.updates.count(key)) both.insert(key);
  }
  if (!both.empty()) {
    return MakeError(422, "UnprocessableEntityException",
                     "properties both updated and removed: " + *both.begin());
  }
  auto report = ctx.catalog().UpdateNamespaceProperties(ctx.path.warehouse, ctx.path.levels, change);
  if (!report.ok()) {
    return ErrorFromStatus(report.status(), NoSuchNamespace(NamespaceDisplayName(ctx.path.levels)));
  }
  return SendJson(
      ctx, Json{{"updated", report->updated}, {"removed", report->removed}, {"missing", report->missing}});
}

HandlerResult ListEntities(RequestContext& ctx, meta::EntityKind kind) {
  Paging paging;
  if (auto error = ReadPaging(ctx, paging)) return error;
  auto fetch = [&](const std::string& start_after, uint32_t limit) {
    return ctx.catalog().ListEntities(ctx.path.warehouse, ctx.path.levels, kind, start_after, limit);
  };
  auto key = [](const meta::EntityRecord& record) { return record.name; };
  auto to_json = [](const meta::EntityRecord& record) {
    return Json{{"namespace", NamespaceToJson(record.levels)}, {"name", record.name}};
  };
  auto visible = [](const meta::EntityRecord&) { return true; };
  Json listing;
  if (auto error = CollectListing("identifiers", paging, fetch, key, to_json, visible,
                                  NoSuchNamespace(NamespaceDisplayName(ctx.path.levels)), listing)) {
    return error;
  }
  return SendJson(ctx, listing);
}

}  // namespace serac::catalog
