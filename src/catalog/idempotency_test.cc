#include "catalog/idempotency.h"

#include <gtest/gtest.h>

#include <thread>

namespace serac::catalog {
namespace {

RecordedResponse Answer(int status, std::string body) {
  RecordedResponse response;
  response.status = status;
  response.headers = {{"Content-Type", "application/json"}};
  response.body = std::move(body);
  return response;
}

TEST(IdempotencyStoreTest, AFinalAnswerIsReplayedAndAServerErrorForgotten) {
  IdempotencyStore store(std::chrono::seconds(60));
  RecordedResponse replay;
  ASSERT_EQ(store.Begin("ak\nk1", "POST /t", replay), IdempotencyStore::Claim::kRun);
  store.Finish("ak\nk1", Answer(200, "{\"a\":1}"));
  ASSERT_EQ(store.Begin("ak\nk1", "POST /t", replay), IdempotencyStore::Claim::kReplay);
  EXPECT_EQ(replay.status, 200);
  EXPECT_EQ(replay.body, "{\"a\":1}");
  EXPECT_EQ(store.Begin("ak\nk1", "POST /other", replay), IdempotencyStore::Claim::kMismatch);

  ASSERT_EQ(store.Begin("ak\nk2", "POST /t", replay), IdempotencyStore::Claim::kRun);
  store.Finish("ak\nk2", Answer(503, ""));
  EXPECT_EQ(store.Begin("ak\nk2", "POST /t", replay), IdempotencyStore::Claim::kRun);
  store.Finish("ak\nk2", Answer(403, ""));  // a retry may be allowed later
  EXPECT_EQ(store.Begin("ak\nk2", "POST /t", replay), IdempotencyStore::Claim::kRun);
}

TEST(IdempotencyStoreTest, ADuplicateWaitsForTheFirstAnswer) {
  IdempotencyStore store(std::chrono::seconds(60));
  RecordedResponse replay;
  ASSERT_EQ(store.Begin("ak\nk", "POST /t", replay), IdempotencyStore::Claim::kRun);
  std::thread first([&store] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    store.Finish("ak\nk", Answer(204, ""));
  });
  RecordedResponse waited;
  EXPECT_EQ(store.Begin("ak\nk", "POST /t", waited), IdempotencyStore::Claim::kReplay);
  EXPECT_EQ(waited.status, 204);
  first.join();
}

TEST(IdempotencyStoreTest, AnswersExpireAfterTheLifetime) {
  IdempotencyStore store(std::chrono::seconds(0));
  RecordedResponse replay;
  ASSERT_EQ(store.Begin("ak\nk", "POST /t", replay), IdempotencyStore::Claim::kRun);
  store.Finish("ak\nk", Answer(200, "{}"));
  EXPECT_EQ(store.Begin("ak\nk", "POST /t", replay), IdempotencyStore::Claim::kRun);
}

}  // namespace
}  // namespace serac::catalog
