// The replication connection on a real PostgreSQL (SERAC_TEST_PG=HOST:PORT, set by
// tests/test_sync.py): a slot created with an exported snapshot, a reader in that snapshot that
// does not see a row committed after it, the stream from the consistent point that delivers that
// row exactly once, and an acknowledgement that becomes the slot's confirmed_flush_lsn.
#include "sync/replication.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "sync/postgres.h"
#include "sync/test_postgres_internal.h"

namespace serac::sync {
namespace {

TEST(ReplicationFromPostgres, SnapshotAndStreamMeetExactly) {
  std::optional<PostgresSource> found = TestPostgres();
  if (!found) GTEST_SKIP() << "SERAC_TEST_PG is not set (tests/test_sync.py sets it)";
  const PostgresSource source = *found;
  auto writer = PgConnection::Connect(source);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  for (const char* sql :
       {"DROP PUBLICATION IF EXISTS handoff_pub", "DROP TABLE IF EXISTS handoff",
        "CREATE TABLE handoff (id int PRIMARY KEY)", "INSERT INTO handoff SELECT generate_series(1, 10)",
        "CREATE PUBLICATION handoff_pub FOR TABLE handoff"}) {
    ASSERT_TRUE(writer->Query(sql).ok()) << sql;
  }
  (void)writer->Query("SELECT pg_drop_replication_slot('handoff_slot')");

  auto stream = ReplicationStream::Connect(source);
  ASSERT_TRUE(stream.ok()) << stream.status().ToString();
  auto slot = stream->CreateSlot("handoff_slot");
  ASSERT_TRUE(slot.ok()) << slot.status().ToString();
  EXPECT_FALSE(slot->snapshot_name.empty());
  // Committed after the slot: in the stream, not in the snapshot.
  ASSERT_TRUE(writer->Query("INSERT INTO handoff VALUES (100)").ok());
  auto reader = PgConnection::Connect(source);
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(BeginWithSnapshot(*reader, slot->snapshot_name).ok());
  auto count = reader->Query("SELECT count(*), max(id) FROM handoff");
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(*count->rows[0][0], "10");
  EXPECT_EQ(*count->rows[0][1], "10");
  EXPECT_FALSE(BeginWithSnapshot(*reader, "x'; DROP TABLE handoff; --").ok());

  ReplicationStream::StartOptions options;
  options.publication = "handoff_pub";
  ASSERT_TRUE(stream->Start("handoff_slot", slot->consistent_point, options).ok());
  pgoutput::Decoder decoder(options.protocol_version);
  std::vector<std::string> inserted;
  pgoutput::Lsn commit_end = 0;
  for (int i = 0; i < 50 && commit_end == 0; ++i) {
    auto frame = stream->Next(std::chrono::milliseconds(200));
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    if (!frame->has_value()) continue;
    auto message = decoder.Decode((*frame)->payload);
    ASSERT_TRUE(message.ok()) << message.status().ToString();
    if (auto* insert = std::get_if<pgoutput::Insert>(&message->body))
      inserted.push_back(insert->row[0].bytes);
    if (auto* commit = std::get_if<pgoutput::Commit>(&message->body)) commit_end = commit->end_lsn;
  }
  EXPECT_EQ(inserted, std::vector<std::string>{"100"});
  ASSERT_GT(commit_end, slot->consistent_point);
  // Nothing else arrives: the row came once.
  auto quiet = stream->Next(std::chrono::milliseconds(300));
  ASSERT_TRUE(quiet.ok());
  EXPECT_FALSE(quiet->has_value() && (*quiet)->payload[0] == 'I');

  ASSERT_TRUE(stream->Acknowledge(commit_end).ok());
  std::string confirmed;
  for (int i = 0; i < 50 && confirmed != pgoutput::LsnToText(commit_end); ++i) {
    (void)stream->Next(std::chrono::milliseconds(100));
    auto slots = writer->Query(
        "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'handoff_slot'");
    ASSERT_TRUE(slots.ok());
    confirmed = slots->rows.at(0).at(0).value_or("");
  }
  EXPECT_EQ(confirmed, pgoutput::LsnToText(commit_end));
}

}  // namespace
}  // namespace serac::sync
