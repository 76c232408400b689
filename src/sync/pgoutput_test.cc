// pgoutput messages and CopyBoth frames built byte by byte as PostgreSQL sends them, decoded; every
// truncation of a valid message refused with the message type and position named. (The same
// decoder against a real PostgreSQL's stream: PgoutputFromPostgres, run by tests/test_sync.py.)
#include "sync/pgoutput.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "sync/postgres.h"
#include "sync/streamed_transactions.h"
#include "sync/test_postgres_internal.h"

namespace serac::sync::pgoutput {
namespace {

// Builds a message in network byte order.
class Bytes {
 public:
  explicit Bytes(char type) : bytes_(1, type) {}
  Bytes& U8(uint8_t v) { return Raw(v, 1); }
  Bytes& I16(int16_t v) { return Raw(static_cast<uint16_t>(v), 2); }
  Bytes& I32(int64_t v) { return Raw(static_cast<uint32_t>(v), 4); }
  Bytes& I64(uint64_t v) { return Raw(v, 8); }
  Bytes& Str(std::string_view s) {
    bytes_.append(s);
    bytes_.push_back('\0');
    return *this;
  }
  Bytes& Text(std::string_view s) {
    U8('t');
    I32(static_cast<int64_t>(s.size()));
    bytes_.append(s);
    return *this;
  }
  const std::string& str() const { return bytes_; }

 private:
  Bytes& Raw(uint64_t v, int width) {
    for (int shift = (width - 1) * 8; shift >= 0; shift -= 8) bytes_.push_back(static_cast<char>(v >> shift));
    return *this;
  }
  std::string bytes_;
};

template <typename T>
const T& As(const Result<Message>& message) {
  EXPECT_TRUE(message.ok()) << message.status().ToString();
  return std::get<T>(message->body);
}

TEST(PgoutputTest, TransactionWithEveryChangeKind) {
  Decoder decoder(1);
  const auto begin = decoder.Decode(Bytes('B').I64(0x16B374D848).I64(123456789).I32(741).str());
  EXPECT_EQ(As<Begin>(begin).final_lsn, 0x16B374D848u);
  EXPECT_EQ(As<Begin>(begin).xid, 741u);
  const auto relation = decoder.Decode(Bytes('R')
                                           .I32(16384)
                                           .Str("public")
                                           .Str("orders")
                                           .U8('f')
                                           .I16(3)
                                           .U8(1)
                                           .Str("id")
                                           .I32(20)
                                           .I32(-1)
                                           .U8(0)
                                           .Str("amount")
                                           .I32(1700)
                                           .I32((12 << 16) + 2 + 4)
                                           .U8(0)
                                           .Str("note")
                                           .I32(25)
                                           .I32(-1)
                                           .str());
  const Relation& orders = As<Relation>(relation);
  EXPECT_EQ(orders.name, "orders");
  EXPECT_EQ(orders.replica_identity, 'f');
  ASSERT_EQ(orders.columns.size(), 3u);
  EXPECT_TRUE(orders.columns[0].is_key);
  EXPECT_EQ(orders.columns[1].type_oid, 1700u);
  EXPECT_EQ(orders.columns[1].type_modifier, (12 << 16) + 6);
  const auto insert =
      decoder.Decode(Bytes('I').I32(16384).U8('N').I16(3).Text("1").Text("9.50").U8('n').str());
  ASSERT_EQ(As<Insert>(insert).row.size(), 3u);
  EXPECT_EQ(As<Insert>(insert).row[1].bytes, "9.50");
  EXPECT_EQ(As<Insert>(insert).row[2].kind, Value::Kind::kNull);
  // An update with the whole old row (REPLICA IDENTITY FULL) and an unchanged TOASTed value.
  const auto update = decoder.Decode(Bytes('U')
                                         .I32(16384)
                                         .U8('O')
                                         .I16(3)
                                         .Text("1")
                                         .Text("9.50")
                                         .U8('n')
                                         .U8('N')
                                         .I16(3)
                                         .Text("1")
                                         .Text("10.00")
                                         .U8('u')
                                         .str());
  ASSERT_TRUE(As<Update>(update).old_row.has_value());
  EXPECT_FALSE(As<Update>(update).old_key.has_value());
  EXPECT_EQ(As<Update>(update).row[2].kind, Value::Kind::kUnchangedToast);
  const auto key_update = decoder.Decode(
      Bytes('U').I32(16384).U8('K').I16(1).Text("1").U8('N').I16(3).Text("2").Text("10.00").U8('n').str());
  EXPECT_EQ(As<Update>(key_update).old_key->at(0).bytes, "1");
  const auto plain_update = decoder.Decode(Bytes('U').I32(16384).U8('N').I16(1).Text("3").str());
  EXPECT_FALSE(As<Update>(plain_update).old_key || As<Update>(plain_update).old_row);
  const auto deleted = decoder.Decode(Bytes('D').I32(16384).U8('K').I16(1).Text("2").str());
  EXPECT_EQ(As<Delete>(deleted).old_key->at(0).bytes, "2");
  const auto truncate = decoder.Decode(Bytes('T').I32(2).U8(3).I32(16384).I32(16390).str());
  EXPECT_EQ(As<Truncate>(truncate).relations, (std::vector<uint32_t>{16384, 16390}));
  EXPECT_TRUE(As<Truncate>(truncate).cascade && As<Truncate>(truncate).restart_identity);
  const auto type = decoder.Decode(Bytes('Y').I32(16400).Str("public").Str("mood").str());
  EXPECT_EQ(As<TypeInfo>(type).name, "mood");
  const auto origin = decoder.Decode(Bytes('O').I64(77).Str("upstream").str());
  EXPECT_EQ(As<Origin>(origin).name, "upstream");
  const auto message = decoder.Decode(Bytes('M').U8(1).I64(99).Str("app").I32(3).str() + "abc");
  EXPECT_EQ(As<LogicalMessage>(message).content, "abc");
  EXPECT_TRUE(As<LogicalMessage>(message).transactional);
  const auto commit =
      decoder.Decode(Bytes('C').U8(0).I64(0x16B374D848).I64(0x16B374D878).I64(123456790).str());
  EXPECT_EQ(As<Commit>(commit).end_lsn, 0x16B374D878u);
  EXPECT_EQ(LsnToText(As<Commit>(commit).end_lsn), "16/B374D878");
}

TEST(PgoutputTest, StreamedTransactionsCarryTheirXid) {
  Decoder decoder(2);
  ASSERT_TRUE(decoder.Decode(Bytes('S').I32(900).U8(1).str()).ok());
  EXPECT_TRUE(decoder.in_stream());
  auto insert = decoder.Decode(Bytes('I').I32(900).I32(16384).U8('N').I16(1).Text("7").str());
  ASSERT_TRUE(insert.ok()) << insert.status().ToString();
  EXPECT_EQ(insert->xid, 900u);
  EXPECT_EQ(As<Insert>(insert).relation, 16384u);
  ASSERT_TRUE(decoder.Decode(Bytes('E').str()).ok());
  EXPECT_FALSE(decoder.in_stream());
  // Outside the block the same bytes mean relation 900: the xid is read only inside.
  auto outside = decoder.Decode(Bytes('I').I32(16384).U8('N').I16(1).Text("8").str());
  EXPECT_FALSE(outside->xid.has_value());
  const auto commit = decoder.Decode(Bytes('c').I32(900).U8(0).I64(10).I64(20).I64(30).str());
  EXPECT_EQ(As<StreamCommit>(commit).xid, 900u);
  const auto abort = decoder.Decode(Bytes('A').I32(900).I32(901).str());
  EXPECT_EQ(As<StreamAbort>(abort).subtransaction_xid, 901u);
  EXPECT_FALSE(As<StreamAbort>(abort).abort_lsn.has_value());
  Decoder v4(4);
  const auto parallel_abort = v4.Decode(Bytes('A').I32(900).I32(900).I64(55).I64(66).str());
  EXPECT_EQ(As<StreamAbort>(parallel_abort).abort_lsn, 55u);
  // Two-phase messages need protocol 3.
  const std::string prepare = Bytes('P').U8(0).I64(1).I64(2).I64(3).I32(900).Str("gid-1").str();
  EXPECT_EQ(decoder.Decode(prepare).status().code(), ErrorCode::kInvalidArgument);
  Decoder v3(3);
  EXPECT_EQ(As<TwoPhase>(v3.Decode(prepare)).gid, "gid-1");
  const auto rollback = v3.Decode(Bytes('r').U8(0).I64(1).I64(2).I64(3).I64(4).I32(900).Str("gid-1").str());
  EXPECT_EQ(As<TwoPhase>(rollback).rollback_time, 4);
  // Streams need protocol 2; blocks do not nest.
  Decoder v1(1);
  EXPECT_FALSE(v1.Decode(Bytes('S').I32(1).U8(1).str()).ok());
  ASSERT_TRUE(decoder.Decode(Bytes('S').I32(901).U8(0).str()).ok());
  EXPECT_FALSE(decoder.Decode(Bytes('S').I32(902).U8(0).str()).ok());
}

// Two streamed transactions interleaved in blocks: 900 with subtransaction 901 rolled back, 910
// rolled back whole; 900's Relation sent inside the rolled-back subtransaction is kept.
TEST(PgoutputTest, StreamedTransactionsAreReplayedWithoutWhatRolledBack) {
  StreamedTransactions streamed(::testing::TempDir());
  Decoder decoder(2);
  auto receive = [&](const std::string& payload, uint32_t xid) {
    auto message = decoder.Decode(payload);
    ASSERT_TRUE(message.ok()) << message.status().ToString();
    ASSERT_TRUE(streamed.Append(xid, *message, payload).ok());
  };
  auto insert = [](uint32_t xid, const std::string& value) {
    return Bytes('I').I32(xid).I32(16384).U8('N').I16(1).Text(value).str();
  };
  ASSERT_TRUE(decoder.Decode(Bytes('S').I32(900).U8(1).str()).ok());
  receive(insert(900, "1"), 900);
  receive(Bytes('R')
              .I32(901)
              .I32(16384)
              .Str("public")
              .Str("t")
              .U8('d')
              .I16(1)
              .U8(1)
              .Str("id")
              .I32(23)
              .I32(-1)
              .str(),
          900);
  receive(insert(901, "2"), 900);
  ASSERT_TRUE(decoder.Decode(Bytes('E').str()).ok());
  ASSERT_TRUE(decoder.Decode(Bytes('S').I32(910).U8(1).str()).ok());
  receive(insert(910, "3"), 910);
  ASSERT_TRUE(decoder.Decode(Bytes('E').str()).ok());
  ASSERT_TRUE(decoder.Decode(Bytes('S').I32(900).U8(0).str()).ok());
  receive(insert(902, "4"), 900);
  ASSERT_TRUE(decoder.Decode(Bytes('E').str()).ok());
  EXPECT_EQ(streamed.open_transactions(), 2u);
  EXPECT_GT(streamed.spilled_bytes(), 0u);

  streamed.Abort(900, 901);
  streamed.Abort(910, 910);
  EXPECT_EQ(streamed.open_transactions(), 1u);
  std::vector<std::string> applied;
  Status replayed = streamed.Replay(900, [&](const Message& message) {
    if (auto* row = std::get_if<Insert>(&message.body)) applied.push_back(row->row[0].bytes);
    if (auto* relation = std::get_if<Relation>(&message.body))
      applied.push_back("relation " + relation->name);
    return Status::Ok();
  });
  ASSERT_TRUE(replayed.ok()) << replayed.ToString();
  EXPECT_EQ(applied, (std::vector<std::string>{"1", "relation t", "4"}));
  EXPECT_EQ(streamed.open_transactions(), 0u);
  // A transaction whose every change rolled back, or that was never streamed, replays nothing.
  EXPECT_TRUE(
      streamed.Replay(910, [](const Message&) { return Error(ErrorCode::kInternal, "replayed"); }).ok());
}

TEST(PgoutputTest, EveryTruncationIsRefusedByName) {
  const std::vector<std::string> valid = {
      Bytes('B').I64(1).I64(2).I32(3).str(),
      Bytes('R').I32(1).Str("s").Str("t").U8('d').I16(1).U8(1).Str("id").I32(23).I32(-1).str(),
      Bytes('I').I32(1).U8('N').I16(2).Text("abc").U8('n').str(),
      Bytes('U').I32(1).U8('K').I16(1).Text("1").U8('N').I16(1).Text("2").str(),
      Bytes('D').I32(1).U8('O').I16(1).Text("1").str(),
      Bytes('T').I32(1).U8(0).I32(5).str(),
      Bytes('C').U8(0).I64(1).I64(2).I64(3).str(),
  };
  for (const std::string& message : valid) {
    Decoder decoder(1);
    ASSERT_TRUE(decoder.Decode(message).ok()) << message[0];
    for (size_t length = 1; length < message.size(); ++length) {
      auto truncated = Decoder(1).Decode(message.substr(0, length));
      ASSERT_FALSE(truncated.ok()) << message[0] << " cut at " << length;
      EXPECT_EQ(truncated.status().message().rfind(std::string("pgoutput message '") + message[0] + "'", 0),
                0u)
          << truncated.status().message();
    }
    EXPECT_NE(Decoder(1).Decode(message + "x").status().message().find("1 bytes left over"),
              std::string::npos);
  }
  // A huge count is refused before anything is allocated.
  EXPECT_NE(Decoder(1)
                .Decode(Bytes('I').I32(1).U8('N').I16(32000).str())
                .status()
                .message()
                .find("impossible column count"),
            std::string::npos);
  EXPECT_NE(Decoder(1)
                .Decode(Bytes('I').I32(1).U8('N').I16(1).U8('t').I32(1 << 30).str())
                .status()
                .message()
                .find("value longer than the message"),
            std::string::npos);
  EXPECT_FALSE(Decoder(1).Decode(Bytes('I').I32(1).U8('N').I16(1).U8('x').str()).ok());
  EXPECT_FALSE(Decoder(1).Decode(Bytes('Z').str()).ok());
  EXPECT_FALSE(Decoder(1).Decode("").ok());
}

TEST(PgoutputTest, CopyBothFramesAndLsns) {
  const std::string payload = Bytes('B').I64(1).I64(2).I32(3).str();
  auto data = DecodeCopyData(Bytes('w').I64(100).I64(200).I64(300).str() + payload);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(std::get<XLogData>(*data).wal_start, 100u);
  EXPECT_EQ(std::get<XLogData>(*data).payload, payload);
  auto keepalive = DecodeCopyData(Bytes('k').I64(500).I64(600).U8(1).str());
  ASSERT_TRUE(keepalive.ok());
  EXPECT_TRUE(std::get<Keepalive>(*keepalive).reply_requested);
  EXPECT_FALSE(DecodeCopyData(Bytes('k').I64(500).str()).ok());
  EXPECT_FALSE(DecodeCopyData("q").ok());
  EXPECT_EQ(StandbyStatusUpdate(1, 2, 3, 4, true), Bytes('r').I64(1).I64(2).I64(3).I64(4).U8(1).str());
  EXPECT_EQ(ParseLsn("16/B374D848").value(), 0x16B374D848u);
  EXPECT_EQ(ParseLsn("0/0").value(), 0u);
  EXPECT_EQ(LsnToText(0xFFFFFFFFFFFFFFFFull), "FFFFFFFF/FFFFFFFF");
  for (const char* bad : {"", "16", "/1", "1/", "x/1", "123456789/0"})
    EXPECT_FALSE(ParseLsn(bad).ok()) << bad;
}

// The decoder on a real PostgreSQL's pgoutput (logical decoding through SQL, which emits the same
// messages a replication connection streams). tests/test_sync.py runs it with
// SERAC_TEST_PG=HOST:PORT of a server started with wal_level=logical and user postgres trusted.
class PgoutputFromPostgres : public ::testing::Test {
 protected:
  void SetUp() override {
    std::optional<PostgresSource> found = TestPostgres();
    if (!found) GTEST_SKIP() << "SERAC_TEST_PG is not set (tests/test_sync.py sets it)";
    source_ = *found;
    auto admin = PgConnection::Connect(source_);
    ASSERT_TRUE(admin.ok()) << admin.status().ToString();
    ASSERT_TRUE(admin->Query("DROP DATABASE IF EXISTS pgoutput_live WITH (FORCE)").ok());
    ASSERT_TRUE(admin->Query("CREATE DATABASE pgoutput_live").ok());
    source_.database = "pgoutput_live";
    auto connection = PgConnection::Connect(source_);
    ASSERT_TRUE(connection.ok()) << connection.status().ToString();
    connection_.emplace(std::move(connection).value());
    Run("CREATE TYPE mood AS ENUM ('sad', 'happy')");
    Run("CREATE TABLE keyed (id int PRIMARY KEY, note text, big text, feeling mood)");
    Run("CREATE TABLE whole (id int, v text)");
    Run("ALTER TABLE whole REPLICA IDENTITY FULL");
    Run("CREATE PUBLICATION pub FOR TABLE keyed, whole");
    Run("SELECT pg_create_logical_replication_slot('live', 'pgoutput')");
  }

  void Run(const std::string& sql) {
    auto result = connection_->Query(sql);
    ASSERT_TRUE(result.ok()) << sql << ": " << result.status().ToString();
  }

  // The slot's messages since the last call, decoded.
  std::vector<Message> Changes(int protocol, const std::string& extra_options = "") {
    auto rows = connection_->Query(
        "SELECT encode(data, 'hex') FROM pg_logical_slot_get_binary_changes('live', NULL, NULL, "
        "'proto_version', '" +
        std::to_string(protocol) + "', 'publication_names', 'pub'" + extra_options + ")");
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<Message> messages;
    Decoder decoder(protocol);
    for (const auto& row : rows.ok() ? rows->rows : decltype(rows->rows){}) {
      std::string bytes;
      const std::string& hex = *row[0];
      for (size_t i = 0; i + 1 < hex.size(); i += 2)
        bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
      auto message = decoder.Decode(bytes);
      EXPECT_TRUE(message.ok()) << message.status().ToString();
      if (message.ok()) messages.push_back(std::move(message).value());
    }
    return messages;
  }

  static std::string Types(const std::vector<Message>& messages) {
    std::string types;
    for (const Message& message : messages) types += message.type;
    return types;
  }

  PostgresSource source_;
  std::optional<PgConnection> connection_;
};

TEST_F(PgoutputFromPostgres, DecodesEveryChangeKind) {
  Run("INSERT INTO keyed VALUES (1, 'one', (SELECT string_agg(md5(i::text), '') FROM generate_series(1, "
      "5000) i), "
      "'happy')");
  Run("UPDATE keyed SET note = 'uno' WHERE id = 1");  // big is TOASTed and unchanged
  Run("UPDATE keyed SET id = 2 WHERE id = 1");        // the key changes
  Run("DELETE FROM keyed WHERE id = 2");
  Run("INSERT INTO whole VALUES (7, 'seven')");
  Run("UPDATE whole SET v = 'siete'");
  Run("TRUNCATE whole");
  const std::vector<Message> messages = Changes(1);
  // Relations are sent before their first change (and a truncate); the enum's type before the
  // relation using it.
  EXPECT_EQ(Types(messages), "BYRICBUCBUCBDCBRICBUCBRTC") << Types(messages);
  const Relation* keyed = nullptr;
  for (const Message& message : messages) {
    if (const auto* relation = std::get_if<Relation>(&message.body); relation && relation->name == "keyed")
      keyed = relation;
  }
  ASSERT_NE(keyed, nullptr);
  EXPECT_EQ(keyed->columns.size(), 4u);
  EXPECT_TRUE(keyed->columns[0].is_key);
  EXPECT_EQ(keyed->replica_identity, 'd');
  const auto& toast_update = std::get<Update>(messages[6].body);
  EXPECT_EQ(toast_update.row[1].bytes, "uno");
  EXPECT_EQ(toast_update.row[2].kind, Value::Kind::kUnchangedToast);
  const auto& key_update = std::get<Update>(messages[9].body);
  ASSERT_TRUE(key_update.old_key.has_value());
  EXPECT_EQ(key_update.old_key->at(0).bytes, "1");
  EXPECT_EQ(key_update.row[0].bytes, "2");
  EXPECT_EQ(std::get<Delete>(messages[12].body).old_key->at(0).bytes, "2");
  const auto& full_update = std::get<Update>(messages[19].body);
  ASSERT_TRUE(full_update.old_row.has_value());
  EXPECT_EQ(full_update.old_row->at(1).bytes, "seven");
  const auto& commit = std::get<Commit>(messages.back().body);
  EXPECT_GT(commit.end_lsn, commit.commit_lsn);
}

TEST_F(PgoutputFromPostgres, StreamsLargeTransactionsInBlocks) {
  Run("SET logical_decoding_work_mem = '64kB'");
  Run("INSERT INTO keyed SELECT i, repeat('x', 200), NULL, 'sad' FROM generate_series(1, 3000) i");
  const std::vector<Message> messages = Changes(2, ", 'streaming', 'on'");
  const std::string types = Types(messages);
  ASSERT_NE(types.find('S'), std::string::npos) << types.substr(0, 40);
  EXPECT_EQ(types.back(), 'c');
  size_t inserts = 0;
  for (const Message& message : messages) {
    if (message.type == 'I') {
      ++inserts;
      EXPECT_TRUE(message.xid.has_value());
    }
  }
  EXPECT_EQ(inserts, 3000u);
}

}  // namespace
}  // namespace serac::sync::pgoutput
