// `serac user`, `serac key` and `serac policy`: identity administration through the admin API
// (admin/admin_api.h). Human-readable output by default, the server's JSON with --json.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/client_commands_internal.h"
#include "cli/text_table.h"
#include "client/admin_requests.h"
#include "common/clock.h"
#include "common/limits.h"

namespace serac::cli {
namespace {

using State = CommandState;
using Json = nlohmann::json;

std::string Pretty(const Json& json) { return json.dump(2, ' ', false, Json::error_handler_t::replace); }

// The member `key`, or null when `object` is not an object or lacks it (operator[] on a const
// json would be undefined behaviour).
const Json& Field(const Json& object, std::string_view key) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  auto found = object.find(key);
  return found != object.end() ? *found : kNull;
}

std::string StringField(const Json& object, std::string_view key) {
  const Json& value = Field(object, key);
  return value.is_string() ? value.get<std::string>() : "";
}

// Calls the admin API and parses its JSON reply ({} for 204 No Content).
Result<Json> CallJson(const State& state, const client::ApiRequest& request) {
  client::ApiClient api(state.connection);
  SERAC_ASSIGN_OR_RETURN(std::string body, api.Call(request));
  if (body.empty()) return Json::object();
  Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Error(ErrorCode::kInternal, "server sent a response that is not JSON");
  return parsed;
}

bool BoolField(const Json& object, std::string_view key) {
  const Json& value = Field(object, key);
  return value.is_boolean() && value.get<bool>();
}

std::string EnabledWord(const Json& object) { return BoolField(object, "enabled") ? "enabled" : "disabled"; }

std::string CreatedText(const Json& object) {
  const Json& value = Field(object, "created-ms");
  if (!value.is_number_integer()) return "";
  return FormatIso8601(FromUnixMillis(value.get<int64_t>()));
}

std::string JoinStrings(const Json& list) {
  std::string text;
  if (!list.is_array()) return text;
  for (const Json& item : list) {
    if (!text.empty()) text += ",";
    text += item.is_string() ? item.get<std::string>() : Pretty(item);
  }
  return text;
}

const Json& ListField(const Json& reply, std::string_view field) {
  static const Json kEmpty = Json::array();
  const Json& value = Field(reply, field);
  return value.is_array() ? value : kEmpty;
}

// Prints the reply as JSON with --json, else `message`.
Status Report(const State& state, const Json& reply, const std::string& message) {
  Print(state.json_output ? Pretty(reply) : message);
  return Status::Ok();
}

// --- user ---

Status AddUser(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::CreateUserRequest(state.name, state.policies)));
  return Report(state, reply, "User " + state.name + " created.");
}

Status ListUsers(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::ListUsersRequest()));
  if (state.json_output) return Report(state, reply, "");
  std::vector<std::vector<std::string>> rows;
  for (const Json& user : ListField(reply, "users")) {
    rows.push_back({StringField(user, "name"), EnabledWord(user), JoinStrings(Field(user, "policies")),
                    CreatedText(user)});
  }
  Print(FormatTable({"NAME", "STATUS", "POLICIES", "CREATED"}, rows));
  return Status::Ok();
}

Status ShowUser(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::GetUserRequest(state.name)));
  if (state.json_output) return Report(state, reply, "");
  Print("Name:      " + StringField(reply, "name") + "\nStatus:    " + EnabledWord(reply) +
        "\nPolicies:  " + JoinStrings(Field(reply, "policies")) + "\nCreated:   " + CreatedText(reply));
  return Status::Ok();
}

Status RemoveUser(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::DeleteUserRequest(state.name)));
  return Report(state, reply, "User " + state.name + " removed.");
}

Status SetUserEnabled(const State& state, bool enabled) {
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::SetUserEnabledRequest(state.name, enabled)));
  return Report(state, reply, "User " + state.name + (enabled ? " enabled." : " disabled."));
}

// --- key ---

Status AddKey(const State& state) {
  if (!state.new_secret_key.empty() && state.new_access_key.empty()) {
    return Error(ErrorCode::kInvalidArgument, "--secret-key needs --access-key too");
  }
  std::optional<std::string> access_key;
  std::optional<std::string> secret_key;
  if (!state.new_access_key.empty()) access_key = state.new_access_key;
  if (!state.new_secret_key.empty()) secret_key = state.new_secret_key;
  SERAC_ASSIGN_OR_RETURN(
      Json reply,
      CallJson(state, client::CreateAccessKeyRequest(state.user, access_key, secret_key, state.description)));
  return Report(state, reply,
                "Access key for user " + state.user +
                    " created.\n  Access key:  " + StringField(reply, "access-key") +
                    "\n  Secret key:  " + StringField(reply, "secret-key") +
                    "\n  (the secret key is shown only now: store it safely)");
}

Status ListKeys(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::ListAccessKeysRequest(state.user)));
  if (state.json_output) return Report(state, reply, "");
  std::vector<std::vector<std::string>> rows;
  for (const Json& key : ListField(reply, "access-keys")) {
    rows.push_back({StringField(key, "access-key"), StringField(key, "user"), EnabledWord(key),
                    CreatedText(key), StringField(key, "description")});
  }
  Print(FormatTable({"ACCESS KEY", "USER", "STATUS", "CREATED", "DESCRIPTION"}, rows));
  return Status::Ok();
}

Status RemoveKey(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::DeleteAccessKeyRequest(state.name)));
  return Report(state, reply, "Access key " + state.name + " removed.");
}

Status SetKeyEnabled(const State& state, bool enabled) {
  SERAC_ASSIGN_OR_RETURN(Json reply,
                         CallJson(state, client::SetAccessKeyEnabledRequest(state.name, enabled)));
  return Report(state, reply, "Access key " + state.name + (enabled ? " enabled." : " disabled."));
}

// --- policy ---

Status CreatePolicy(const State& state) {
  SERAC_ASSIGN_OR_RETURN(std::string document,
                         ReadInputFile(state.file, limits::kPolicyDocumentBytesMax,
                                       "limits::kPolicyDocumentBytesMax", "policy file"));
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::PutPolicyRequest(state.name, document)));
  return Report(state, reply, "Policy " + state.name + " stored.");
}

Status ListPolicies(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::ListPoliciesRequest()));
  if (state.json_output) return Report(state, reply, "");
  std::vector<std::vector<std::string>> rows;
  for (const Json& policy : ListField(reply, "policies")) {
    rows.push_back({StringField(policy, "name"), BoolField(policy, "builtin") ? "built-in" : "custom"});
  }
  Print(FormatTable({"NAME", "TYPE"}, rows));
  return Status::Ok();
}

Status ShowPolicy(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::GetPolicyRequest(state.name)));
  const Json& document = Field(reply, "document");
  Print(state.json_output || document.is_null() ? Pretty(reply) : Pretty(document));
  return Status::Ok();
}

Status RemovePolicy(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::DeletePolicyRequest(state.name)));
  return Report(state, reply, "Policy " + state.name + " removed.");
}

Status AttachPolicy(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::AttachPolicyRequest(state.name, state.user)));
  return Report(state, reply, "Policy " + state.name + " attached to user " + state.user + ".");
}

Status DetachPolicy(const State& state) {
  SERAC_ASSIGN_OR_RETURN(Json reply, CallJson(state, client::DetachPolicyRequest(state.name, state.user)));
  return Report(state, reply, "Policy " + state.name + " detached from user " + state.user + ".");
}

// --- registration ---

CLI::App* AddIamGroup(CLI::App& app, const std::string& name, const std::string& description, State& state) {
  CLI::App* group = AddGroup(app, name, description, state);
  group->add_flag("--json", state.json_output, "Print the server's JSON reply");
  return group;
}

void RegisterUser(CLI::App& app, State& state) {
  CLI::App* group = AddIamGroup(app, "user", "Manage IAM users", state);
  CLI::App* add = AddLeaf(group, "add", "Create a user", state, AddUser);
  add->add_option("--policy", state.policies, "Attach this policy (repeatable)")->allow_extra_args(false);
  AddLeaf(group, "list", "List users", state, ListUsers);
  CLI::App* show = AddLeaf(group, "show", "Show a user", state, ShowUser);
  CLI::App* remove = AddLeaf(group, "remove", "Remove a user and its access keys", state, RemoveUser);
  CLI::App* enable = AddLeaf(group, "enable", "Enable a user", state,
                             [](const State& s) { return SetUserEnabled(s, true); });
  CLI::App* disable = AddLeaf(group, "disable", "Disable a user (its keys stop working at once)", state,
                              [](const State& s) { return SetUserEnabled(s, false); });
  for (CLI::App* leaf : {add, show, remove, enable, disable}) {
    leaf->add_option("NAME", state.name, "User name")->required();
  }
}

void RegisterKey(CLI::App& app, State& state) {
  CLI::App* group = AddIamGroup(app, "key", "Manage users' access keys", state);
  CLI::App* add =
      AddLeaf(group, "add", "Create an access key for a user; prints its secret once", state, AddKey);
  add->add_option("USER", state.user, "User name")->required();
  // Here --access-key/--secret-key name the new key; the caller's own keys then come from
  // SERAC_ACCESS_KEY/SERAC_SECRET_KEY (or flags given before `add`).
  add->add_option("--access-key", state.new_access_key, "Id of the new key (default: generated)");
  add->add_option("--secret-key", state.new_secret_key, "Secret of the new key (default: generated)");
  add->add_option("--description", state.description, "What the key is for");
  CLI::App* list = AddLeaf(group, "list", "List access keys (of one user, or of all)", state, ListKeys);
  list->add_option("USER", state.user, "User name");
  CLI::App* remove = AddLeaf(group, "remove", "Remove an access key", state, RemoveKey);
  CLI::App* enable = AddLeaf(group, "enable", "Enable an access key", state,
                             [](const State& s) { return SetKeyEnabled(s, true); });
  CLI::App* disable = AddLeaf(group, "disable", "Disable an access key (it stops working at once)", state,
                              [](const State& s) { return SetKeyEnabled(s, false); });
  for (CLI::App* leaf : {remove, enable, disable}) {
    leaf->add_option("KEY", state.name, "Access key id")->required();
  }
}

void RegisterPolicy(CLI::App& app, State& state) {
  CLI::App* group = AddIamGroup(app, "policy", "Manage IAM policies (AWS IAM JSON documents)", state);
  CLI::App* create =
      AddLeaf(group, "create", "Create or replace a policy from a JSON file", state, CreatePolicy);
  create->add_option("NAME", state.name, "Policy name")->required();
  create->add_option("FILE", state.file, "Policy document (JSON); - reads standard input")->required();
  AddLeaf(group, "list", "List policies", state, ListPolicies);
  CLI::App* show = AddLeaf(group, "show", "Print a policy document", state, ShowPolicy);
  CLI::App* remove =
      AddLeaf(group, "remove", "Remove a policy that no user has attached", state, RemovePolicy);
  for (CLI::App* leaf : {show, remove}) leaf->add_option("NAME", state.name, "Policy name")->required();
  CLI::App* attach = AddLeaf(group, "attach", "Attach a policy to a user", state, AttachPolicy);
  CLI::App* detach = AddLeaf(group, "detach", "Detach a policy from a user", state, DetachPolicy);
  for (CLI::App* leaf : {attach, detach}) {
    leaf->add_option("NAME", state.name, "Policy name")->required();
    leaf->add_option("USER", state.user, "User name")->required();
  }
}

}  // namespace

void RegisterIamCommands(CLI::App& app, CommandState& state) {
  RegisterUser(app, state);
  RegisterKey(app, state);
  RegisterPolicy(app, state);
}

}  // namespace serac::cli
