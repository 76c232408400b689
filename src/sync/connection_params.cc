#include "sync/connection_params.h"

#include <algorithm>
#include <iterator>
#include <string_view>

namespace serac::sync {
namespace {

// libpq's connection keywords (PostgreSQL 15's PQconndefaults), those source.json's own fields set
// apart.
constexpr std::string_view kLibpqKeywords[] = {"hostaddr",
                                               "passfile",
                                               "channel_binding",
                                               "connect_timeout",
                                               "options",
                                               "application_name",
                                               "fallback_application_name",
                                               "keepalives",
                                               "keepalives_idle",
                                               "keepalives_interval",
                                               "keepalives_count",
                                               "tcp_user_timeout",
                                               "gssencmode",
                                               "sslmode",
                                               "requiressl",
                                               "sslcompression",
                                               "sslcert",
                                               "sslkey",
                                               "sslpassword",
                                               "sslrootcert",
                                               "sslcrl",
                                               "sslcrldir",
                                               "sslsni",
                                               "requirepeer",
                                               "ssl_min_protocol_version",
                                               "ssl_max_protocol_version",
                                               "krbsrvname",
                                               "gsslib",
                                               "service",
                                               "target_session_attrs"};

// What a source.json field sets, or serac itself needs as it is.
struct Reserved {
  std::string_view keyword;
  std::string_view reason;
};
constexpr Reserved kReserved[] = {
    {"host", "source.json's host field sets it"},
    {"port", "source.json's port field sets it"},
    {"dbname", "source.json's database field sets it"},
    {"user", "source.json's username field sets it"},
    {"password", "source.json's password field sets it"},
    {"replication", "serac opens replication connections itself"},
    {"client_encoding", "serac reads every value as UTF-8"},
};

// PostgreSQL JDBC driver parameters that mean nothing to libpq (or to a reader): reported, not used.
constexpr std::string_view kJdbcOnly[] = {
    "adaptiveFetch",
    "adaptiveFetchMaximum",
    "adaptiveFetchMinimum",
    "allowEncodingChanges",
    "assumeMinServerVersion",
    "authenticationPluginClassName",
    "autosave",
    "binaryTransfer",
    "binaryTransferDisable",
    "binaryTransferEnable",
    "cancelSignalTimeout",
    "cleanupSavepoints",
    "databaseMetadataCacheFields",
    "databaseMetadataCacheFieldsMiB",
    "defaultRowFetchSize",
    "disableColumnSanitiser",
    "escapeSyntaxCallMode",
    "groupStartupParameters",
    "gssResponseTimeout",
    "gssUseDefaultCreds",
    "hideUnprivilegedObjects",
    "hostRecheckSeconds",
    "jaasApplicationName",
    "jaasLogin",
    "loadBalanceHosts",
    "localSocketAddress",
    "loggerFile",
    "loggerLevel",
    "logServerErrorDetail",
    "logUnclosedConnections",
    "maxResultBuffer",
    "maxSendBufferSize",
    "preferQueryMode",
    "preparedStatementCacheQueries",
    "preparedStatementCacheSizeMiB",
    "prepareThreshold",
    "protocolVersion",
    "quoteReturningIdentifiers",
    "readOnly",
    "readOnlyMode",
    "receiveBufferSize",
    "reWriteBatchedInserts",
    "requireAuth",
    "sendBufferSize",
    "socketFactory",
    "socketFactoryArg",
    "socketTimeout",
    "sslfactory",
    "sslfactoryarg",
    "sslhostnameverifier",
    "sslNegotiation",
    "sslpasswordcallback",
    "sslResponseTimeout",
    "sspiServiceClass",
    "stringtype",
    "tcpNoDelay",
    "unknownLength",
    "useSpnego",
    "xmlFactoryFactory",
};

Status Invalid(const std::string& file, const std::string& key, const std::string& why) {
  return Error(ErrorCode::kInvalidArgument, file + ": jdbc_url_params." + key + ": " + why);
}

bool IsWholeNumber(const std::string& text) {
  return !text.empty() && text.size() <= 9 &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsSettingName(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
}

}  // namespace

Status AddJdbcUrlParam(const std::string& key, const std::string& value, const std::string& file,
                       PostgresSource& out, std::vector<ConfigNotice>& notices) {
  const std::string field = "jdbc_url_params." + key;
  for (const Reserved& reserved : kReserved) {
    if (key == reserved.keyword) {
      notices.push_back({file, field, "not used: " + std::string(reserved.reason)});
      return Status::Ok();
    }
  }
  if (key == "options") {
    out.connection_options = value;
    return Status::Ok();
  }
  if (std::find(std::begin(kLibpqKeywords), std::end(kLibpqKeywords), key) != std::end(kLibpqKeywords)) {
    out.connection_params[key] = value;
    return Status::Ok();
  }
  // The JDBC driver's names (its documentation's), to libpq's.
  if (key == "connectTimeout" || key == "loginTimeout") {
    if (!IsWholeNumber(value)) return Invalid(file, key, "must be a whole number of seconds");
    out.connection_params["connect_timeout"] = value;
    return Status::Ok();
  }
  if (key == "ApplicationName") {
    out.connection_params["application_name"] = value;
    return Status::Ok();
  }
  if (key == "currentSchema") {
    out.server_settings.emplace_back("search_path", value);
    return Status::Ok();
  }
  if (key == "user" || key == "password") {
    notices.push_back({file, field,
                       "not used: source.json's " + std::string(key == "user" ? "username" : "password") +
                           " field sets it"});
    return Status::Ok();
  }
  if (key == "ssl") {
    if (value != "true" && value != "false") return Invalid(file, key, "must be true or false");
    out.connection_params["sslmode"] =
        value == "true" ? "verify-full" : "disable";  // the JDBC driver's meaning
    return Status::Ok();
  }
  if (key == "tcpKeepAlive") {
    if (value != "true" && value != "false") return Invalid(file, key, "must be true or false");
    out.connection_params["keepalives"] = value == "true" ? "1" : "0";
    return Status::Ok();
  }
  if (key == "targetServerType") {
    static constexpr std::pair<std::string_view, std::string_view> kTargets[] = {
        {"any", "any"},
        {"primary", "primary"},
        {"master", "primary"},
        {"secondary", "standby"},
        {"standby", "standby"},
        {"preferSecondary", "prefer-standby"},
        {"preferStandby", "prefer-standby"}};
    for (const auto& [jdbc, libpq] : kTargets) {
      if (value == jdbc) {
        out.connection_params["target_session_attrs"] = std::string(libpq);
        return Status::Ok();
      }
    }
    if (value == "preferPrimary") {
      notices.push_back({file, field, "not used: libpq has no preferPrimary (any server is taken)"});
      return Status::Ok();
    }
    return Invalid(file, key, "must be any, primary, secondary, preferSecondary or preferPrimary");
  }
  if (key == "gssEncMode") {
    if (value != "disable" && value != "allow" && value != "prefer" && value != "require") {
      return Invalid(file, key, "must be disable, allow, prefer or require");
    }
    out.connection_params["gssencmode"] = value == "allow" ? "prefer" : value;  // libpq has no allow
    return Status::Ok();
  }
  if (key == "channelBinding") {
    out.connection_params["channel_binding"] = value;
    return Status::Ok();
  }
  if (key == "kerberosServerName") {
    out.connection_params["krbsrvname"] = value;
    return Status::Ok();
  }
  if (std::find(std::begin(kJdbcOnly), std::end(kJdbcOnly), key) != std::end(kJdbcOnly)) {
    notices.push_back({file, field, "not used: a JDBC driver parameter libpq has no equivalent of"});
    return Status::Ok();
  }
  // Anything else is a server setting (statement_timeout, search_path, ...), as pgx sends it.
  if (!IsSettingName(key)) return Invalid(file, key, "is neither a connection parameter nor a setting name");
  out.server_settings.emplace_back(key, value);
  return Status::Ok();
}

std::string ServerSettingOptions(const std::vector<std::pair<std::string, std::string>>& settings) {
  std::string options;
  for (const auto& [name, value] : settings) {
    options += (options.empty() ? "-c " : " -c ") + name + "=";
    for (char c : value) {
      if (c == ' ' || c == '\\') options += '\\';  // libpq splits options at unescaped spaces
      options += c;
    }
  }
  return options;
}

}  // namespace serac::sync
