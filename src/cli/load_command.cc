// `serac table load WAREHOUSE NS TABLE FILE...`: local Parquet, CSV or JSON-lines files written as
// the table's own Parquet data files (through S3 on the server) and committed as one snapshot
// through the catalog: an append, or with --mode overwrite a replacement of everything the table
// held (or, with --where, of the rows matching a filter, whole files at a time). Nothing is committed unless
// every row fits; a commit that loses a race is prepared again on the new table state (the data files are
// kept, only manifests are rewritten); a commit whose answer was lost is looked for before it is tried again
// (iceberg::CommitSnapshot).
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "cli/table_access.h"
#include "client/rest_table_catalog.h"
#include "iceberg/schema/partition.h"
#include "iceberg/write/snapshot_producer.h"
#include "iceberg/write/table_catalog.h"
#include "parquet/parquet_files.h"

namespace serac::cli {

namespace {

// Whether a column's type exists only from format version 3 on (nanosecond timestamps), at any depth.
bool NeedsFormatVersion3(const std::vector<iceberg::NestedField>& fields) {
  for (const iceberg::NestedField& field : fields) {
    const iceberg::TypeId id = field.type.id;
    if (id == iceberg::TypeId::kTimestampNs || id == iceberg::TypeId::kTimestampTzNs) return true;
    if (NeedsFormatVersion3(field.type.fields)) return true;
  }
  return false;
}

// "day(ts), category, bucket(16, id)" as a partition spec of `schema`: terms are a column
// (identity) or TRANSFORM(column) / bucket(N, column) / truncate(W, column), with Spark's plural
// names (years, months, days, hours) accepted too; fields named as Java names them.
Result<std::string> PartitionSpecJson(const std::string& text, const iceberg::Schema& schema) {
  iceberg::PartitionSpec spec;
  size_t start = 0;
  int depth = 0;
  std::vector<std::string> terms;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '(') ++depth;
    if (i < text.size() && text[i] == ')') --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      terms.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  auto trim = [](std::string value) {
    while (!value.empty() && value.front() == ' ') value.erase(value.begin());
    while (!value.empty() && value.back() == ' ') value.pop_back();
    return value;
  };
  for (std::string term : terms) {
    term = trim(term);
    std::string transform = "identity";
    std::string column = term;
    std::string argument;
    const size_t open = term.find('(');
    if (open != std::string::npos) {
      if (term.back() != ')')
        return Error(ErrorCode::kInvalidArgument, "--partition-by: cannot read \"" + term + "\"");
      transform = trim(term.substr(0, open));
      std::string inside = term.substr(open + 1, term.size() - open - 2);
      const size_t comma = inside.find(',');
      if (comma != std::string::npos) {
        argument = trim(inside.substr(0, comma));
        inside = inside.substr(comma + 1);
      }
      column = trim(inside);
    }
    if (transform == "bucket" || transform == "truncate") {
      if (argument.empty() || argument.find_first_not_of("0123456789") != std::string::npos) {
        return Error(ErrorCode::kInvalidArgument,
                     "--partition-by: " + transform + " needs a number: \"" + term + "\"");
      }
      transform += "[" + argument + "]";
    } else if (!argument.empty()) {
      return Error(ErrorCode::kInvalidArgument, "--partition-by: unknown transform in \"" + term + "\"");
    }
    if (schema.FindFieldByName(column) == nullptr) {
      return Error(ErrorCode::kInvalidArgument, "--partition-by: the input has no column " + column);
    }
    Result<iceberg::PartitionField> field = iceberg::MakePartitionField(
        schema, column, transform, 1000 + static_cast<int32_t>(spec.fields.size()));
    if (!field.ok()) return Error(ErrorCode::kInvalidArgument, "--partition-by: " + field.status().message());
    spec.fields.push_back(std::move(field).value());
  }
  return iceberg::PartitionSpecToJson(spec);
}

}  // namespace

Status LoadIntoTable(const CommandState& state) {
  parquet::PreferJemallocForArrow();  // before anything of Arrow's allocates
  const auto started = std::chrono::steady_clock::now();
  if (state.input_files.empty()) return Error(ErrorCode::kInvalidArgument, "no input files");
  if (state.load_mode != "append" && state.load_mode != "overwrite") {
    return Error(ErrorCode::kInvalidArgument, "--mode is append or overwrite, not " + state.load_mode);
  }
  const bool overwrite = state.load_mode == "overwrite";
  std::optional<iceberg::Expression> where;
  if (!state.where.empty()) {
    if (!overwrite) return Error(ErrorCode::kInvalidArgument, "--where applies to --mode overwrite");
    SERAC_ASSIGN_OR_RETURN(where, iceberg::ParseFilterText(state.where));
  }
  SERAC_ASSIGN_OR_RETURN(client::NamespaceLevels levels, client::ParseNamespace(state.ns));
  const client::TableIdentifier id{levels, state.name};
  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<client::RestCatalog> catalog, ConnectCatalog(state));

  SERAC_ASSIGN_OR_RETURN(std::unique_ptr<iceberg::FileIO> io, ConnectStorage(state));
  // Inputs named s3://bucket/key are objects on the server, read with ranged GETs.
  auto through = [&](const std::string& path) { return path.rfind("s3://", 0) == 0 ? io.get() : nullptr; };
  Result<iceberg::TableMetadata> table = LoadTableMetadata(*catalog, id);
  if (!table.ok() && table.status().code() == ErrorCode::kNotFound && state.create_table) {
    const std::string& first = state.input_files[0];
    SERAC_ASSIGN_OR_RETURN(parquet::InputFormat format, FormatOf(state, first));
    SERAC_ASSIGN_OR_RETURN(iceberg::Schema schema, parquet::InferSchema(first, format, through(first)));
    client::TableCreation creation;
    creation.name = state.name;
    creation.schema_json = iceberg::SchemaToJson(schema);
    if (state.format_version != 0) {
      creation.properties["format-version"] = std::to_string(state.format_version);
    } else if (NeedsFormatVersion3(schema.fields)) {
      creation.properties["format-version"] = "3";  // nanosecond timestamps exist from format 3 on
    }
    if (!state.partition_by.empty()) {
      SERAC_ASSIGN_OR_RETURN(creation.partition_spec_json, PartitionSpecJson(state.partition_by, schema));
    }
    SERAC_RETURN_IF_ERROR(catalog->CreateTable(levels, creation).status());
    table = LoadTableMetadata(*catalog, id);
  } else if (table.ok() && state.format_version != 0) {
    return Error(ErrorCode::kInvalidArgument, "--format-version applies when --create creates the table; " +
                                                  state.ns + "." + state.name + " exists");
  } else if (table.ok() && !state.partition_by.empty()) {
    return Error(ErrorCode::kInvalidArgument, "--partition-by applies when --create creates the table; " +
                                                  state.ns + "." + state.name +
                                                  " exists and is written with its own partition spec");
  }
  if (!table.ok()) return table.status();
  if (where) SERAC_RETURN_IF_ERROR(iceberg::BindExpression(*where, table->CurrentSchema()).status());

  SERAC_ASSIGN_OR_RETURN(parquet::WriteOptions options,
                         parquet::WriteOptions::FromTableProperties(table->properties()));
  options.sort_order = table->DefaultSortOrder();
  options.parallel_columns = true;  // one load uses every core
  SERAC_ASSIGN_OR_RETURN(parquet::DataFileWriter writer,
                         parquet::DataFileWriter::Make(table->CurrentSchema(), table->DefaultSpec(), options,
                                                       *io, TableLocation(*table) + "/data"));
  // On a terminal, a progress line redrawn at most five times a second; otherwise only the summary.
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  // The first batch is drawn at once, then at most five times a second.
  auto last_drawn = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  if (terminal) {
    writer.OnProgress([&](const parquet::LoadProgress& progress) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_drawn < std::chrono::milliseconds(200)) return;
      last_drawn = now;
      const double seconds = std::chrono::duration<double>(now - started).count();
      std::fprintf(stderr, "\r%llu rows, %.1f MB read, %llu files written, %.0f rows/s   ",
                   static_cast<unsigned long long>(progress.rows),
                   static_cast<double>(progress.input_bytes) / 1e6,
                   static_cast<unsigned long long>(progress.files_written),
                   seconds > 0 ? static_cast<double>(progress.rows) / seconds : 0.0);
      std::fflush(stderr);
    });
  }
  auto end_progress_line = [&] {
    if (terminal) std::fprintf(stderr, "\r\033[K");
  };
  for (const std::string& path : state.input_files) {
    Result<parquet::InputFormat> format = FormatOf(state, path);
    Status appended = format.ok() ? writer.AppendFile(path, *format, through(path)) : format.status();
    if (!appended.ok()) {
      end_progress_line();
      writer.AbortAndDelete();
      return Error(appended.code(), appended.message() + " (nothing was committed)");
    }
  }
  Result<std::vector<iceberg::DataFile>> files = writer.Finish();
  end_progress_line();
  if (!files.ok()) {
    writer.AbortAndDelete();
    return files.status();
  }
  iceberg::SnapshotProducer producer(
      *io, overwrite ? iceberg::ProducerKind::kOverwrite : iceberg::ProducerKind::kAppend);
  for (iceberg::DataFile& file : *files) producer.AddDataFile(std::move(file));
  if (where) {
    producer.RemoveRowsMatching(*where, true);
  } else if (overwrite) {
    producer.RemoveAllFiles();
  }
  client::RestTableCatalog table_catalog(*catalog);
  Result<int64_t> snapshot =
      iceberg::CommitSnapshot(table_catalog, iceberg::TableRef{levels, state.name}, producer);
  if (!snapshot.ok()) {
    if (snapshot.status().code() != ErrorCode::kOutcomeUnknown) writer.AbortAndDelete();
    return Error(snapshot.status().code(), snapshot.status().message() + " (nothing was committed)");
  }
  const parquet::LoadProgress& progress = writer.progress();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  char line[512];
  std::snprintf(line, sizeof(line),
                "%s %llu rows into %s.%s: %llu data files, %llu bytes, snapshot %lld (%.1f s, %.0f rows/s)",
                where       ? "Replaced the matching rows with"
                : overwrite ? "Replaced the table's rows with"
                            : "Loaded",
                static_cast<unsigned long long>(progress.rows), state.ns.c_str(), state.name.c_str(),
                static_cast<unsigned long long>(progress.files_written),
                static_cast<unsigned long long>(progress.bytes_written), static_cast<long long>(*snapshot),
                seconds, seconds > 0 ? static_cast<double>(progress.rows) / seconds : 0.0);
  Print(line);
  return Status::Ok();
}

}  // namespace serac::cli
