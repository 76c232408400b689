// `serac file show FILE`: what is inside a file of a table, without a server. Avro object container
// files (manifests, manifest lists) print their header metadata and then one record per line in
// Avro's JSON encoding, so they can be read, diffed and piped to jq.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/client_commands_internal.h"
#include "common/json_reads.h"
#include "common/limits.h"
#include "iceberg/avro.h"

namespace serac::cli {

namespace {

constexpr std::string_view kAvroMagic("Obj\x01", 4);

Status ShowAvro(const std::string& path, const std::string& bytes, const CommandState& state) {
  auto reader = iceberg::avro::FileReader::Open(bytes);
  if (!reader.ok()) return Error(ErrorCode::kInvalidArgument, path + ": " + reader.status().message());
  Json header = Json::object();
  for (const auto& [key, value] : reader->metadata()) {
    if (key == "avro.schema") continue;
    header[key] = value;
  }
  Json head = {{"file", path},
               {"format", "avro"},
               {"metadata", header},
               {"schema", Json::parse(iceberg::avro::SchemaToJson(*reader->schema()), nullptr, false)}};
  Print(head.dump(-1, ' ', false, Json::error_handler_t::replace));
  if (state.schema_only) return Status::Ok();
  uint64_t printed = 0;
  uint64_t count = 0;
  std::string_view encoded;
  while (true) {
    Result<bool> more = reader->NextBlock(count, encoded);
    if (!more.ok()) return Error(ErrorCode::kInvalidArgument, path + ": " + more.status().message());
    if (!*more) return Status::Ok();
    for (uint64_t i = 0; i < count; ++i) {
      if (state.limit != 0 && printed == state.limit) return Status::Ok();
      auto value = iceberg::avro::Decode(*reader->schema(), encoded);
      if (!value.ok()) {
        return Error(ErrorCode::kInvalidArgument,
                     path + ": record " + std::to_string(printed + 1) + ": " + value.status().message());
      }
      Print(iceberg::avro::ValueToJson(*reader->schema(), *value));
      ++printed;
    }
  }
}

Status ShowFile(const CommandState& state) {
  SERAC_ASSIGN_OR_RETURN(std::string bytes, ReadInputFile(state.file, limits::kCliShownFileBytesMax,
                                                          "limits::kCliShownFileBytesMax", "file"));
  if (std::string_view(bytes).starts_with(kAvroMagic)) return ShowAvro(state.file, bytes, state);
  return Error(ErrorCode::kInvalidArgument,
               state.file + ": not a file serac can show (Avro object container files are)");
}

}  // namespace

void RegisterFileCommands(CLI::App& app, CommandState& state) {
  CLI::App* group = app.add_subcommand("file", "Look inside a table's files (no server needed)");
  group->require_subcommand(1);
  CLI::App* show = group->add_subcommand("show", "Print a file's header and records as JSON lines");
  show->add_option("FILE", state.file, "Local file (an Avro manifest or manifest list)")->required();
  show->add_flag("--schema-only", state.schema_only, "Print the header line only");
  show->add_option("--limit", state.limit, "Print at most this many records (0: all)");
  show->callback([&state] { state.action = [&state] { return ShowFile(state); }; });
}

}  // namespace serac::cli
