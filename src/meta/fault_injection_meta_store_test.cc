// The fault-injecting wrapper itself: failures land exactly where armed, "after" faults change
// state while reporting an error, and a simulated crash keeps everything acknowledged.
#include "meta/fault_injection_meta_store.h"

#include <gtest/gtest.h>

#include "meta/meta_store_test_util.h"
#include "meta/open_meta_store.h"

namespace serac::meta {
namespace {

using testing::MakeObject;
using testing::TempDir;

class FaultInjectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string path = (dir_.path() / "meta.db").string();
    auto opened = FaultInjectionMetaStore::Open([path] { return OpenMetaStore("sqlite:" + path); });
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    SERAC_ASSERT_OK(store_->CreateBucket({"bucket", 1}));
  }

  Status Put(const std::string& key, WriteCondition condition = {}) {
    return store_->PutObject(MakeObject("bucket", key, "e", {{"blob-" + key, 1}}), condition);
  }
  bool Exists(const std::string& key) { return store_->GetObject("bucket", key).ok(); }

  TempDir dir_;
  std::unique_ptr<FaultInjectionMetaStore> store_;
};

TEST_F(FaultInjectionTest, FailureBeforeDelegatingChangesNothing) {
  store_->FailNthMutation(2, FaultTiming::kBeforeDelegating);
  SERAC_EXPECT_OK(Put("first"));
  EXPECT_EQ(Put("second").code(), ErrorCode::kIoError);
  SERAC_EXPECT_OK(Put("third"));
  EXPECT_TRUE(Exists("first"));
  EXPECT_FALSE(Exists("second"));
  EXPECT_TRUE(Exists("third"));
  EXPECT_EQ(store_->mutation_count(), 4u);  // the bucket, then three puts
}

TEST_F(FaultInjectionTest, LostAcknowledgementStillChangesState) {
  store_->FailNthMutation(1, FaultTiming::kAfterDelegating);
  EXPECT_EQ(Put("k", {true, std::nullopt}).code(), ErrorCode::kIoError);
  EXPECT_TRUE(Exists("k"));
  // A client retrying a create-only write learns that its first attempt landed.
  EXPECT_EQ(Put("k", {true, std::nullopt}).code(), ErrorCode::kPreconditionFailed);
}

TEST_F(FaultInjectionTest, DisarmedFaultNeverFires) {
  store_->FailNthMutation(1, FaultTiming::kBeforeDelegating);
  store_->DisarmFault();
  SERAC_EXPECT_OK(Put("k"));
}

TEST_F(FaultInjectionTest, CrashKeepsAcknowledgedWritesOnly) {
  SERAC_ASSERT_OK(Put("acknowledged"));
  store_->FailNthMutation(1, FaultTiming::kBeforeDelegating);
  EXPECT_FALSE(Put("refused").ok());
  SERAC_ASSERT_OK(store_->SimulateCrash());
  EXPECT_TRUE(Exists("acknowledged"));
  EXPECT_FALSE(Exists("refused"));
  SERAC_EXPECT_OK(Put("after-restart"));
  EXPECT_TRUE(Exists("after-restart"));
}

}  // namespace
}  // namespace serac::meta
