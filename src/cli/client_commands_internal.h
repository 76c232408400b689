// Private to cli/: the parsed arguments shared by the client subcommands and the helpers that
// client_commands.cc (catalog commands) and iam_commands.cc (user, key, policy) both use.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "client/api_client.h"
#include "client/catalog_requests.h"
#include "common/status.h"

namespace CLI {
class App;
}

namespace serac::cli {

struct CommandState {
  // Several subcommands declare the same flags into this one struct. CLI11 would also apply an
  // option's environment variable to subcommands that were not chosen, overwriting the flag, so
  // the environment is read afterwards by ResolveConnection instead.
  client::ConnectionFlags flags;
  client::Connection connection;   // resolved just before the chosen subcommand runs
  std::function<Status()> action;  // set by the callback of the subcommand that was parsed
  // Arguments, shared by the subcommands (only one runs per process).
  std::string warehouse;
  std::string ns;
  std::string name;
  std::string parent;
  std::string schema;
  std::string partition_spec;
  std::string from;
  std::string to;
  std::string engine;
  std::vector<std::string> properties;
  std::vector<std::string> unsets;
  bool upgrade_existing = false;
  bool force = false;
  bool preserve_bucket = false;
  bool purge = false;
  // user / key / policy
  std::string user;
  std::string policy;
  std::string file;
  std::string new_access_key;
  std::string new_secret_key;
  std::string description;
  std::vector<std::string> policies;
  bool json_output = false;  // --json: machine-readable output
  // file show
  bool schema_only = false;
  bool iceberg_view = false;  // file show --iceberg
  // table load
  std::vector<std::string> input_files;
  std::string input_format;  // empty: from each file's extension
  std::string load_mode = "append";
  std::string where;         // --where: with --mode overwrite, the rows replaced
  std::string partition_by;  // --partition-by, with --create
  bool create_table = false;
  int32_t format_version = 0;  // --format-version, with --create; 0: 2, or 3 when a column needs it
  // table delete-rows
  std::string keys_file;
  std::string delete_as;  // dv, position or equality; empty: the format version's default
  // table compact
  int64_t small_file_bytes = 0;  // 0: three quarters of write.target-file-size-bytes
  int32_t min_input_files = 2;
  std::string compaction_strategy = "auto";  // auto, binpack or sort
  uint64_t limit = 0;
  // table / warehouse maintenance (0 or empty: not given)
  std::string maintenance_type;
  std::string maintenance_status;
  std::string strategy;
  int64_t target_file_size_mb = 0;
  int64_t min_snapshots = 0;
  int64_t max_age_hours = 0;
  int64_t unreferenced_days = 0;
  int64_t noncurrent_days = 0;
  bool no_wait = false;
  int64_t older_than_seconds = -1;  // table maintenance run, unreferenced files: -1 = the settings' days
  // table expire-snapshots (empty or 0: the table's settings)
  std::string older_than;  // a timestamp ("2026-12-01T00:00:00Z", "2026-12-01") or an age ("36h", "7d")
  int32_t retain_last = 0;
  std::vector<int64_t> snapshot_ids;
};

// The bytes of FILE, or of standard input for "-", refused past `bytes_max` (`limit_name` names the
// limit in the message, `what` the file: "policy file").
Result<std::string> ReadInputFile(const std::string& path, uint64_t bytes_max, std::string_view limit_name,
                                  std::string_view what);

// Registers `serac file show` (file_commands.cc).
void RegisterFileCommands(CLI::App& app, CommandState& state);

// Prints `text` and a newline unless it ends with one.
void Print(const std::string& text);

// `serac table load` (load_command.cc).
Status LoadIntoTable(const CommandState& state);
// `serac table delete-rows` (delete_command.cc).
Status DeleteFromTable(const CommandState& state);
// `serac table compact` (compact_command.cc).
Status CompactTable(const CommandState& state);

// A group such as `serac warehouse` whose subcommands accept the connection flags too.
CLI::App* AddGroup(CLI::App& app, const std::string& name, const std::string& description,
                   CommandState& state);
// A subcommand of `group` that runs `run` when chosen.
CLI::App* AddLeaf(CLI::App* group, const std::string& name, const std::string& description,
                  CommandState& state, std::function<Status(const CommandState&)> run);

// Adds `serac warehouse maintenance` and `serac table maintenance` to the groups `warehouse` and
// `table` (maintenance_command.cc).
void RegisterMaintenanceCommands(CLI::App& warehouse, CLI::App& table, CommandState& state);

// Adds `serac user`, `serac key` and `serac policy` (iam_commands.cc).
void RegisterIamCommands(CLI::App& app, CommandState& state);

}  // namespace serac::cli
