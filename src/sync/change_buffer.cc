// TableSink's change buffer: inserts, updates and deletes kept per key until a flush, so that the
// changes of one key between two flushes land as its last state only.
#include <algorithm>

#include "common/hash.h"
#include "sync/table_sink.h"

namespace serac::sync {
namespace {

// Appends `key`'s texts with their lengths, so that different keys never give the same bytes.
void AppendKeyPart(std::string& bytes, const std::optional<std::string>& text) {
  if (!text) {
    bytes += '\xff';
    return;
  }
  const uint32_t length = static_cast<uint32_t>(text->size());
  bytes.append(reinterpret_cast<const char*>(&length), sizeof(length));
  bytes += *text;
}

}  // namespace

Status TableSink::Insert(const pgoutput::Tuple& row) { return Upsert(row, 'c'); }

Status TableSink::Update(const pgoutput::Update& update) {
  if (!has_key_) {
    if (!update.old_row) {
      return Error(ErrorCode::kInvalidArgument,
                   name() + ": an update of a table without a primary key needs REPLICA IDENTITY FULL on " +
                       source_.namespace_name + "." + source_.name);
    }
    SERAC_RETURN_IF_ERROR(RemoveKey(*update.old_row));
    return Upsert(update.row, 'u');
  }
  // The key changed: the old key's row goes.
  if (update.old_key || update.old_row) {
    const pgoutput::Tuple& old = update.old_key ? *update.old_key : *update.old_row;
    std::vector<std::optional<std::string>> old_key;
    std::vector<std::optional<std::string>> new_key;
    SERAC_ASSIGN_OR_RETURN(std::string old_bytes, KeyOf(old, old_key));
    SERAC_ASSIGN_OR_RETURN(std::string new_bytes, KeyOf(update.row, new_key));
    if (old_bytes != new_bytes) SERAC_RETURN_IF_ERROR(RemoveKey(old));
  }
  return Upsert(update.row, 'u');
}

Status TableSink::Delete(const pgoutput::Delete& deleted) {
  if (deleted.old_key) return RemoveKey(*deleted.old_key);
  if (deleted.old_row) return RemoveKey(*deleted.old_row);
  return Error(ErrorCode::kInvalidArgument,
               name() + ": a delete without the row's key (REPLICA IDENTITY NOTHING on " +
                   source_.namespace_name + "." + source_.name + ")");
}

Status TableSink::Truncate(pgoutput::Lsn lsn) {
  SERAC_RETURN_IF_ERROR(Flush(committed_.lsn));
  return Commit(ChangeFiles(), lsn, true, std::nullopt);
}

Status TableSink::UpsertLoaded(const SourceTexts& texts) {
  if (texts.size() != load_fields_.size()) {
    return Error(ErrorCode::kInvalidArgument, name() + ": a row of " + std::to_string(texts.size()) +
                                                  " values for " + std::to_string(load_fields_.size()) +
                                                  " columns");
  }
  // The same change as a pgoutput insert of the load columns, in their order.
  pgoutput::Tuple tuple(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i]) {
      tuple[i].kind = pgoutput::Value::Kind::kText;
      tuple[i].bytes = *texts[i];
    }
  }
  if (relation_fields_ != load_fields_) {
    relation_fields_ = load_fields_;
    relation_columns_.clear();  // the next Relation message maps its own columns again
  }
  return Upsert(tuple, 'u');
}

Status TableSink::Upsert(const pgoutput::Tuple& tuple, char op) {
  Entry entry;
  SERAC_ASSIGN_OR_RETURN(std::string key, KeyOf(tuple, entry.key));
  entry.op = op;
  entry.changed_at = change_time_;
  entry.row.emplace(schema_.fields.size());
  entry.unchanged.assign(schema_.fields.size(), false);
  bool any_unchanged = false;
  for (size_t c = 0; c < tuple.size(); ++c) {
    const int field = relation_fields_[c];
    if (field < 0) continue;
    const pgoutput::Value& value = tuple[c];
    switch (value.kind) {
      case pgoutput::Value::Kind::kText:
        (*entry.row)[static_cast<size_t>(field)] = value.bytes;
        pending_bytes_ += value.bytes.size();
        break;
      case pgoutput::Value::Kind::kUnchangedToast:
        entry.unchanged[static_cast<size_t>(field)] = true;
        any_unchanged = true;
        break;
      case pgoutput::Value::Kind::kBinary:
        return Error(ErrorCode::kInvalidArgument, name() + ": a value in binary form (text was asked for)");
      case pgoutput::Value::Kind::kNull:
        break;
    }
  }
  pending_bytes_ += 64;
  if (!has_key_ || append_mode_) {
    // Without a key (or in append mode) every change is a row of its own.
    entries_.push_back(std::move(entry));
    return Status::Ok();
  }
  auto found = pending_.find(key);
  if (found != pending_.end()) {
    Entry& earlier = entries_[found->second];
    // Values not sent (unchanged TOAST) are the earlier version's.
    if (any_unchanged && earlier.row) {
      for (size_t f = 0; f < entry.unchanged.size(); ++f) {
        if (!entry.unchanged[f]) continue;
        (*entry.row)[f] = (*earlier.row)[f];
        entry.unchanged[f] = earlier.unchanged[f];
      }
    }
    earlier.row = std::move(entry.row);
    earlier.unchanged = std::move(entry.unchanged);
    // An insert updated in the same flush is still the row's first version here ('c').
    if (!(earlier.op == 'c' && op == 'u')) earlier.op = op;
    earlier.changed_at = entry.changed_at;
    return Status::Ok();
  }
  pending_.emplace(std::move(key), entries_.size());
  entries_.push_back(std::move(entry));
  return Status::Ok();
}

Status TableSink::RemoveKey(const pgoutput::Tuple& key_tuple) {
  // Soft deletes: the row's last version goes and a row with _op_type d, its key and what the
  // source sent of the old row, takes its place.
  if (olake_columns_ && has_key_) return Upsert(key_tuple, 'd');
  // Append mode keeps every version: a delete has no row to add without OLake's columns.
  if (append_mode_) return Status::Ok();
  Entry entry;
  SERAC_ASSIGN_OR_RETURN(std::string key, KeyOf(key_tuple, entry.key));
  pending_bytes_ += 64;
  if (!has_key_) {
    // Earlier inserts of this flush must be committed first: an equality delete reaches only rows
    // of earlier commits.
    if (!entries_.empty()) SERAC_RETURN_IF_ERROR(Flush(committed_.lsn));
    entries_.push_back(std::move(entry));
    return Status::Ok();
  }
  auto found = pending_.find(key);
  if (found != pending_.end()) {
    entries_[found->second].row.reset();
    return Status::Ok();
  }
  pending_.emplace(std::move(key), entries_.size());
  entries_.push_back(std::move(entry));
  return Status::Ok();
}

Result<std::string> TableSink::KeyOf(const pgoutput::Tuple& tuple,
                                     std::vector<std::optional<std::string>>& key) const {
  if (tuple.size() != relation_fields_.size()) {
    return Error(ErrorCode::kInvalidArgument, name() + ": a change of " + std::to_string(tuple.size()) +
                                                  " columns for a relation of " +
                                                  std::to_string(relation_fields_.size()));
  }
  key.assign(key_fields_.size(), std::nullopt);
  std::string bytes;
  for (size_t k = 0; k < key_fields_.size(); ++k) {
    for (size_t c = 0; c < tuple.size(); ++c) {
      if (relation_fields_[c] != key_fields_[k]) continue;
      const pgoutput::Value& value = tuple[c];
      if (value.kind == pgoutput::Value::Kind::kUnchangedToast ||
          value.kind == pgoutput::Value::Kind::kBinary) {
        return Error(ErrorCode::kInvalidArgument,
                     name() + ": key column " + schema_.fields[static_cast<size_t>(key_fields_[k])].name +
                         " came without its text value");
      }
      if (value.kind == pgoutput::Value::Kind::kText) key[k] = value.bytes;
    }
    AppendKeyPart(bytes, key[k]);
  }
  return bytes;
}

Status TableSink::FillUnchanged(Entry& entry) {
  std::vector<size_t> missing;
  for (size_t f = 0; f < entry.unchanged.size(); ++f) {
    if (entry.unchanged[f]) missing.push_back(f);
  }
  if (missing.empty()) return Status::Ok();
  if (lookup_ == nullptr) {
    return Error(ErrorCode::kInternal, name() + ": an unchanged TOAST value and no connection to read it");
  }
  std::string sql = "SELECT ";
  for (size_t i = 0; i < missing.size(); ++i) {
    sql += (i ? ", " : "") + QuoteIdentifier(schema_.fields[missing[i]].name) + "::text";
  }
  sql += " FROM " + source_.QualifiedName() + " WHERE ";
  std::vector<std::optional<std::string>> params;
  for (size_t k = 0; k < key_fields_.size(); ++k) {
    const std::string& column = schema_.fields[static_cast<size_t>(key_fields_[k])].name;
    sql += (k ? " AND " : "") + QuoteIdentifier(column) + "::text = $" + std::to_string(k + 1);
    params.push_back(entry.key[k]);
  }
  SERAC_ASSIGN_OR_RETURN(PgRows rows, lookup_->Query(sql, params));
  for (size_t i = 0; i < missing.size(); ++i) {
    // A row deleted since has its delete later in the stream; null stands in until then.
    (*entry.row)[missing[i]] = rows.rows.empty() ? std::nullopt : rows.rows[0][i];
    entry.unchanged[missing[i]] = false;
  }
  return Status::Ok();
}

void TableSink::FillOlakeColumns(const Entry& entry, parquet::Row& row, int64_t now_micros) const {
  auto put = [&](int field, iceberg::Datum value) {
    if (field >= 0) row[static_cast<size_t>(field)].datum = std::move(value);
  };
  if (has_key_) put(olake_fields_[0], iceberg::Datum(OlakeId(entry.key)));
  put(olake_fields_[1], iceberg::Datum(std::string(1, entry.op)));
  if (entry.changed_at != 0) put(olake_fields_[2], iceberg::Datum(entry.changed_at));
  put(olake_fields_[3], iceberg::Datum(now_micros));
}

std::string TableSink::OlakeId(const std::vector<std::optional<std::string>>& key) const {
  if (key.size() == 1) return key[0].value_or("");
  // A composite key: MD5 of the values joined by |, in the order of the key columns' names.
  std::vector<std::pair<std::string, std::string>> named;
  for (size_t k = 0; k < key.size(); ++k) {
    named.emplace_back(schema_.fields[static_cast<size_t>(key_fields_[k])].name, key[k].value_or(""));
  }
  std::sort(named.begin(), named.end());
  std::string joined;
  for (size_t k = 0; k < named.size(); ++k) joined += (k ? "|" : "") + named[k].second;
  const Md5Digest digest = Md5(joined);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : digest) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  return hex;
}

}  // namespace serac::sync
