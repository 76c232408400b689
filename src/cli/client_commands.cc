#include "cli/client_commands.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/client_commands_internal.h"
#include "client/api_client.h"
#include "client/catalog_requests.h"
#include "client/engine_config.h"
#include "common/limits.h"

namespace serac::cli {

using Json = nlohmann::json;

namespace {

using State = CommandState;

Result<Json> ParseReply(const std::string& body) {
  if (body.empty()) return Json::object();
  Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Error(ErrorCode::kInternal, "server sent a response that is not JSON");
  return parsed;
}

Result<Json> CallJson(const State& state, const client::ApiRequest& request) {
  client::ApiClient api(state.connection);
  SERAC_ASSIGN_OR_RETURN(std::string body, api.Call(request));
  return ParseReply(body);
}

// The string at `key`, or "" when absent or not a string (nlohmann's value() would throw).
std::string StringField(const Json& object, std::string_view key) {
  if (!object.is_object()) return "";
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>() : "";
}

std::string Pretty(const Json& json) { return json.dump(2, ' ', false, Json::error_handler_t::replace); }

// Follows next-page-token until the listing ends; returns every element of `field`.
Result<std::vector<Json>> ListAll(
    const State& state, std::string_view field,
    const std::function<client::ApiRequest(const std::string& page_token)>& page) {
  std::vector<Json> items;
  std::string token;
  for (uint32_t pages = 0; pages < limits::kCliListPagesMax; ++pages) {
    SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, page(token)));
    auto found = reply.find(field);
    if (found == reply.end() || !found->is_array()) {
      return Error(ErrorCode::kInternal, "server reply has no '" + std::string(field) + "' list");
    }
    for (Json& item : *found) items.push_back(std::move(item));
    auto next = reply.find("next-page-token");
    if (next == reply.end() || !next->is_string() || next->get<std::string>().empty()) return items;
    token = next->get<std::string>();
  }
  return Error(ErrorCode::kLimitExceeded, "listing exceeds limits::kCliListPagesMax pages");
}

std::string JoinLevels(const Json& levels) {
  std::string text;
  if (!levels.is_array()) return text;
  for (const Json& level : levels) {
    if (!text.empty()) text += ".";
    text += level.is_string() ? level.get<std::string>() : Pretty(level);
  }
  return text;
}

// --- warehouse ---

Status CreateWarehouse(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply,
                         CallJson(state, client::CreateWarehouseRequest(state.name, state.upgrade_existing)));
  Print("Warehouse " + state.name + " created.");
  return Status::Ok();
}

Status ListWarehouses(const State& state) {
  SERAC_ASSIGN_OR_RETURN(auto names, ListAll(state, "warehouses", client::ListWarehousesRequest));
  for (const Json& name : names) Print(name.is_string() ? name.get<std::string>() : Pretty(name));
  return Status::Ok();
}

Status RemoveWarehouse(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::RemoveWarehouseRequest(state.name, state.force,
                                                                                    state.preserve_bucket)));
  Print("Warehouse " + state.name + " removed.");
  return Status::Ok();
}

// --- namespace ---

Status CreateNamespace(const State& state) {
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, client::ParseNamespace(state.ns));
  SERAC_ASSIGN_OR_RETURN(client::Properties properties, client::ParseProperties(state.properties));
  SERAC_ASSIGN_OR_RETURN(
      Json reply, CallJson(state, client::CreateNamespaceRequest(state.warehouse, levels, properties)));
  Print("Namespace " + state.ns + " created.");
  return Status::Ok();
}

Status ListNamespaces(const State& state) {
  client::NamespaceLevels parent;
  if (!state.parent.empty()) {
    SERAC_ASSIGN_OR_RETURN(parent, client::ParseNamespace(state.parent));
  }
  SERAC_ASSIGN_OR_RETURN(auto namespaces, ListAll(state, "namespaces", [&](const std::string& token) {
                           return client::ListNamespacesRequest(state.warehouse, parent, token);
                         }));
  for (const Json& levels : namespaces) Print(JoinLevels(levels));
  return Status::Ok();
}

Status ShowNamespace(const State& state) {
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, client::ParseNamespace(state.ns));
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::LoadNamespaceRequest(state.warehouse, levels)));
  Print(Pretty(reply));
  return Status::Ok();
}

Status RemoveNamespace(const State& state) {
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, client::ParseNamespace(state.ns));
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::DropNamespaceRequest(state.warehouse, levels)));
  Print("Namespace " + state.ns + " removed.");
  return Status::Ok();
}

Status UpdateNamespace(const State& state) {
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, client::ParseNamespace(state.ns));
  SERAC_ASSIGN_OR_RETURN(client::Properties updates, client::ParseProperties(state.properties));
  if (updates.empty() && state.unsets.empty()) {
    return Error(ErrorCode::kInvalidArgument, "nothing to change: give --set KEY=VALUE or --unset KEY");
  }
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::UpdateNamespaceRequest(state.warehouse, levels,
                                                                                    updates, state.unsets)));
  Print(Pretty(reply));
  return Status::Ok();
}

// --- tables and views ---

Status ListEntities(const State& state, client::EntityKind kind) {
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, client::ParseNamespace(state.ns));
  SERAC_ASSIGN_OR_RETURN(auto identifiers, ListAll(state, "identifiers", [&](const std::string& token) {
                           return client::ListEntitiesRequest(kind, state.warehouse, levels, token);
                         }));
  for (const Json& identifier : identifiers) {
    Print(StringField(identifier, "name"));
  }
  return Status::Ok();
}

Status ShowEntity(const State& state, client::EntityKind kind) {
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, client::ParseNamespace(state.ns));
  SERAC_ASSIGN_OR_RETURN(
      Json reply, CallJson(state, client::LoadEntityRequest(kind, state.warehouse, levels, state.name)));
  auto metadata = reply.find("metadata");
  Print(metadata == reply.end() ? Pretty(reply) : Pretty(*metadata));
  return Status::Ok();
}

Status RemoveEntity(const State& state, client::EntityKind kind) {
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, client::ParseNamespace(state.ns));
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::DropEntityRequest(kind, state.warehouse, levels,
                                                                               state.name, state.purge)));
  Print("Removed " + std::string(client::EntityWord(kind)) + " " + state.ns + "." + state.name + ".");
  return Status::Ok();
}

Status RenameEntity(const State& state, client::EntityKind kind) {
  SERAC_ASSIGN_OR_RETURN(client::QualifiedName from, client::ParseQualifiedName(state.from));
  SERAC_ASSIGN_OR_RETURN(client::QualifiedName to, client::ParseQualifiedName(state.to));
  SERAC_ASSIGN_OR_RETURN(Json reply,
                         CallJson(state, client::RenameEntityRequest(kind, state.warehouse, from, to)));
  Print("Renamed " + std::string(client::EntityWord(kind)) + " " + state.from + " to " + state.to + ".");
  return Status::Ok();
}

Status CreateTable(const State& state) {
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, client::ParseNamespace(state.ns));
  SERAC_ASSIGN_OR_RETURN(client::Properties properties, client::ParseProperties(state.properties));
  SERAC_ASSIGN_OR_RETURN(client::ApiRequest request,
                         client::CreateTableRequest(state.warehouse, levels, state.name, state.schema,
                                                    state.partition_spec, properties));
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, request));
  Print("Table " + state.ns + "." + state.name + " created at " + StringField(reply, "metadata-location"));
  return Status::Ok();
}

// --- config ---

Status PrintEngineConfig(const State& state) {
  client::EngineConfigInput input;
  input.endpoint = state.connection.endpoint;
  input.access_key = state.connection.access_key;
  input.region = state.connection.region;
  input.warehouse = state.warehouse;
  SERAC_ASSIGN_OR_RETURN(std::string text, client::RenderEngineConfig(state.engine, input));
  std::fputs(text.c_str(), stdout);
  return Status::Ok();
}

// --- registration ---

void AddEndpointFlags(CLI::App* command, State& state) {
  command->add_option(
      "--endpoint", state.flags.endpoint,
      "serac server URL (env SERAC_ENDPOINT, default " + std::string(client::kDefaultEndpoint) + ")");
  command->add_option("--access-key", state.flags.access_key, "Access key (env SERAC_ACCESS_KEY)");
  command->add_option("--region", state.flags.region, "Signing region (env SERAC_REGION, default us-east-1)");
}

void AddConnectionFlags(CLI::App* command, State& state) {
  AddEndpointFlags(command, state);
  command->add_option("--secret-key", state.flags.secret_key,
                      "Secret key (prefer env SERAC_SECRET_KEY: flags are visible to other users)");
  command->add_option("--ca-file", state.flags.ca_file, "PEM file of CAs to trust for https");
  command->add_flag("--insecure", state.flags.insecure,
                    "Do not verify the server certificate (self-signed test servers only)");
}

void AddProperties(CLI::App* leaf, const std::string& flag, State& state, const std::string& description) {
  leaf->add_option(flag, state.properties, description)->allow_extra_args(false)->type_name("KEY=VALUE");
}

void RegisterWarehouse(CLI::App& app, State& state) {
  CLI::App* group =
      AddGroup(app, "warehouse", "Manage warehouses (buckets whose tables the catalog manages)", state);
  CLI::App* create = AddLeaf(group, "create", "Create a warehouse", state, CreateWarehouse);
  create->add_option("NAME", state.name, "Warehouse name")->required();
  create->add_flag("--upgrade-existing", state.upgrade_existing, "Turn an existing bucket into a warehouse");
  AddLeaf(group, "list", "List warehouses", state, ListWarehouses);
  CLI::App* remove = AddLeaf(group, "remove", "Remove a warehouse", state, RemoveWarehouse);
  remove->add_option("NAME", state.name, "Warehouse name")->required();
  remove->add_flag("--force", state.force, "Also drop its namespaces, tables and views");
  remove->add_flag("--preserve-bucket", state.preserve_bucket, "Keep the bucket and its objects");
}

void RegisterNamespace(CLI::App& app, State& state) {
  CLI::App* group = AddGroup(app, "namespace", "Manage namespaces (NS is dotted: a.b)", state);
  CLI::App* create = AddLeaf(group, "create", "Create a namespace", state, CreateNamespace);
  create->add_option("WAREHOUSE", state.warehouse)->required();
  create->add_option("NS", state.ns)->required();
  AddProperties(create, "--property", state, "Namespace property (repeatable)");
  CLI::App* list = AddLeaf(group, "list", "List namespaces", state, ListNamespaces);
  list->add_option("WAREHOUSE", state.warehouse)->required();
  list->add_option("--parent", state.parent, "List the children of this namespace");
  CLI::App* show = AddLeaf(group, "show", "Show a namespace and its properties", state, ShowNamespace);
  CLI::App* remove = AddLeaf(group, "remove", "Remove an empty namespace", state, RemoveNamespace);
  for (CLI::App* leaf : {show, remove}) {
    leaf->add_option("WAREHOUSE", state.warehouse)->required();
    leaf->add_option("NS", state.ns)->required();
  }
  CLI::App* update = AddLeaf(group, "update", "Set or unset namespace properties", state, UpdateNamespace);
  update->add_option("WAREHOUSE", state.warehouse)->required();
  update->add_option("NS", state.ns)->required();
  AddProperties(update, "--set", state, "Property to set (repeatable)");
  update->add_option("--unset", state.unsets, "Property to remove (repeatable)")->allow_extra_args(false);
}

void RegisterEntity(CLI::App& app, State& state, client::EntityKind kind) {
  const std::string word(client::EntityWord(kind));
  CLI::App* group = AddGroup(app, word, "Manage " + word + "s", state);
  CLI::App* list = AddLeaf(group, "list", "List the " + word + "s of a namespace", state,
                           [kind](const State& s) { return ListEntities(s, kind); });
  list->add_option("WAREHOUSE", state.warehouse)->required();
  list->add_option("NS", state.ns)->required();
  CLI::App* show = AddLeaf(group, "show", "Print the " + word + "'s metadata JSON", state,
                           [kind](const State& s) { return ShowEntity(s, kind); });
  CLI::App* remove = AddLeaf(group, "remove", "Remove a " + word, state,
                             [kind](const State& s) { return RemoveEntity(s, kind); });
  for (CLI::App* leaf : {show, remove}) {
    leaf->add_option("WAREHOUSE", state.warehouse)->required();
    leaf->add_option("NS", state.ns)->required();
    leaf->add_option(word == "table" ? "TABLE" : "VIEW", state.name)->required();
  }
  CLI::App* rename = AddLeaf(group, "rename", "Rename or move a " + word, state,
                             [kind](const State& s) { return RenameEntity(s, kind); });
  rename->add_option("WAREHOUSE", state.warehouse)->required();
  rename->add_option("FROM", state.from, "NS." + word)->required();
  rename->add_option("TO", state.to, "NS2.new-name")->required();
  if (kind != client::EntityKind::kTable) return;
  remove->add_flag("--purge", state.purge, "Also delete the table's data and metadata files");
  CLI::App* create = AddLeaf(group, "create", "Create a table", state, CreateTable);
  create->add_option("WAREHOUSE", state.warehouse)->required();
  create->add_option("NS", state.ns)->required();
  create->add_option("TABLE", state.name)->required();
  create->add_option("--schema", state.schema, "Iceberg schema JSON")->required();
  create->add_option("--partition-spec", state.partition_spec, "Iceberg partition spec JSON");
  AddProperties(create, "--property", state, "Table property (repeatable)");
  CLI::App* load =
      AddLeaf(group, "load", "Write local Parquet, CSV or JSON-lines files into a table (one commit)", state,
              LoadIntoTable);
  load->add_option("WAREHOUSE", state.warehouse)->required();
  load->add_option("NS", state.ns)->required();
  load->add_option("TABLE", state.name)->required();
  load->add_option("FILE", state.input_files,
                   "Input files (.parquet, .csv, .jsonl), local or s3://BUCKET/KEY on the server")
      ->required();
  load->add_flag("--create", state.create_table,
                 "Create the table from the first file's columns if it does not exist");
  load->add_option("--format", state.input_format, "parquet, csv or jsonl (default: from each file's name)");
  load->add_option("--mode", state.load_mode,
                   "append (default), or overwrite: the files replace everything the table holds");
  load->add_option("--where", state.where,
                   "With --mode overwrite: replace only the rows matching this filter, whole files at a time "
                   "(every loaded row must match it), e.g. \"day >= '2026-01-01' and kind in ('a', 'b')\"");
  load->add_option("--partition-by", state.partition_by,
                   "With --create: the new table's partitioning, e.g. \"day(ts), bucket(16, id)\"");
  load->add_option("--format-version", state.format_version,
                   "With --create: the new table's format version (default 2, or 3 when a column needs it)")
      ->check(CLI::Range(1, 3));
  CLI::App* remove_rows = AddLeaf(
      group, "delete-rows", "Delete the rows whose key columns equal a row of a local file (one commit)",
      state, DeleteFromTable);
  remove_rows->add_option("WAREHOUSE", state.warehouse)->required();
  remove_rows->add_option("NS", state.ns)->required();
  remove_rows->add_option("TABLE", state.name)->required();
  remove_rows
      ->add_option("--keys", state.keys_file,
                   "Parquet, CSV or JSON-lines file whose columns are the key and whose rows are deleted")
      ->required();
  remove_rows->add_option("--format", state.input_format,
                          "parquet, csv or jsonl (default: from the file's name)");
  remove_rows->add_option("--as", state.delete_as,
                          "dv (deletion vectors; format v3's default), position (v2's default) or equality");
  CLI::App* compact =
      AddLeaf(group, "compact",
              "Pack the table's small data files into files of its target size, deletes applied (one replace "
              "commit)",
              state, CompactTable);
  compact->add_option("WAREHOUSE", state.warehouse)->required();
  compact->add_option("NS", state.ns)->required();
  compact->add_option("TABLE", state.name)->required();
  compact
      ->add_option("--small-file-bytes", state.small_file_bytes,
                   "Files below this size are packed (default: 3/4 of write.target-file-size-bytes)")
      ->check(CLI::NonNegativeNumber);
  compact
      ->add_option("--min-input-files", state.min_input_files,
                   "Pack a partition when it has at least this many small files (default 2)")
      ->check(CLI::Range(1, 1000000));
  compact
      ->add_option("--strategy", state.compaction_strategy,
                   "binpack (rows in the order read), sort (the table's sort order; unsorted files are "
                   "rewritten too) or auto (sort when the table has a sort order; the default)")
      ->check(CLI::IsMember({"auto", "binpack", "sort"}));
}

void RegisterConfig(CLI::App& app, State& state) {
  CLI::App* config = app.add_subcommand("config", "Print client configuration for a query engine");
  config->add_option("--engine", state.engine, "Engine")
      ->required()
      ->check(CLI::IsMember(client::EngineNames()));
  config->add_option("--warehouse", state.warehouse, "Warehouse the engine should use");
  AddEndpointFlags(config, state);
  config->callback([&state] { state.action = [&state] { return PrintEngineConfig(state); }; });
}

}  // namespace

Result<std::string> ReadInputFile(const std::string& path, uint64_t bytes_max, std::string_view limit_name,
                                  std::string_view what) {
  std::ifstream file;
  std::istream* in = &std::cin;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) return Error(ErrorCode::kInvalidArgument, "cannot read " + std::string(what) + " " + path);
    in = &file;
  }
  std::string bytes;
  char chunk[64 * 1024];
  while (*in) {
    in->read(chunk, sizeof(chunk));
    bytes.append(chunk, static_cast<size_t>(in->gcount()));
    if (bytes.size() > bytes_max) {
      return Error(ErrorCode::kLimitExceeded, std::string(what) + " " + path + " exceeds " +
                                                  std::string(limit_name) + " (" + std::to_string(bytes_max) +
                                                  " bytes)");
    }
  }
  return bytes;
}

void Print(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
}

CLI::App* AddGroup(CLI::App& app, const std::string& name, const std::string& description,
                   CommandState& state) {
  CLI::App* group = app.add_subcommand(name, description);
  group->require_subcommand(1);
  AddConnectionFlags(group, state);
  return group;
}

CLI::App* AddLeaf(CLI::App* group, const std::string& name, const std::string& description,
                  CommandState& state, std::function<Status(const CommandState&)> run) {
  CLI::App* leaf = group->add_subcommand(name, description);
  leaf->fallthrough();  // connection flags may follow the subcommand's own arguments
  leaf->callback([&state, run = std::move(run)] { state.action = [&state, run] { return run(state); }; });
  return leaf;
}

ClientCommands::ClientCommands() : state_(std::make_unique<CommandState>()) {}
ClientCommands::~ClientCommands() = default;

void ClientCommands::Register(CLI::App& app) {
  RegisterWarehouse(app, *state_);
  RegisterNamespace(app, *state_);
  RegisterEntity(app, *state_, client::EntityKind::kTable);
  RegisterEntity(app, *state_, client::EntityKind::kView);
  RegisterMaintenanceCommands(*app.get_subcommand("warehouse"), *app.get_subcommand("table"), *state_);
  RegisterConfig(app, *state_);
  RegisterIamCommands(app, *state_);
  RegisterFileCommands(app, *state_);
}

std::optional<int> ClientCommands::RunSelected() {
  if (!state_->action) return std::nullopt;
  state_->connection =
      client::ResolveConnection(state_->flags, [](const char* name) { return std::getenv(name); });
  Status status = state_->action();
  if (status.ok()) return 0;
  std::fprintf(stderr, "serac: %s\n", status.message().c_str());
  return 1;
}

}  // namespace serac::cli
