// source.json's `jdbc_url_params` as libpq takes them. OLake documents JDBC parameter names
// (`{"connectTimeout": "20"}`), which libpq refuses; OLake itself hands every entry to pgx, which
// keeps its own keywords and sends the rest to the server as settings. serac does the same, and
// first translates the names PostgreSQL's JDBC driver documents to libpq's where one means the
// same; a JDBC parameter with no libpq equivalent is reported once as not used.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sync/config.h"

namespace serac::sync {

// Adds `key` = `value` (field `jdbc_url_params.KEY` of `file`): a libpq keyword as it is, a JDBC
// name translated (connectTimeout, ApplicationName, currentSchema, ssl, sslmode, tcpKeepAlive,
// targetServerType, ...), a JDBC parameter without a libpq equivalent, or one a source.json field
// already sets (user, password, dbname), noticed as not used; anything else is a server setting,
// as pgx sends it. kInvalidArgument naming the field for a value the translation cannot take.
Status AddJdbcUrlParam(const std::string& key, const std::string& value, const std::string& file,
                       PostgresSource& out, std::vector<ConfigNotice>& notices);

// The libpq `options` value that sets `settings` (-c NAME=VALUE, spaces and backslashes escaped).
std::string ServerSettingOptions(const std::vector<std::pair<std::string, std::string>>& settings);

}  // namespace serac::sync
