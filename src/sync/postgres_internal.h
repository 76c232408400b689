// What postgres.cc and replication.cc share: one way to open a libpq connection from source.json
// (keyword/value parameters, the ssl block's certificates, jdbc_url_params), for queries or for
// logical replication. libpq's own header stays in the .cc files.
#pragma once

#include <string>

#include "common/status.h"
#include "sync/config.h"

struct pg_conn;  // libpq's PGconn

namespace serac::sync {

// A libpq message without its trailing newline.
std::string TrimmedMessage(const char* message);

// A connection the caller owns (PQfinish); kUnavailable naming the server, never the password.
Result<pg_conn*> OpenLibpqConnection(const PostgresSource& source, bool replication);

}  // namespace serac::sync
