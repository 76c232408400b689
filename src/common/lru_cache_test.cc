#include "common/lru_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace serac {
namespace {

std::shared_ptr<const std::string> Value(const std::string& text) {
  return std::make_shared<const std::string>(text);
}

TEST(LruCacheTest, EvictsTheLeastRecentlyUsedBeyondTheEntryBound) {
  LruCache<std::string> cache(2, 1000);
  cache.Put("a", Value("1"), 1);
  cache.Put("b", Value("2"), 1);
  ASSERT_NE(cache.Get("a"), nullptr);  // "a" is now the most recently used
  cache.Put("c", Value("3"), 1);
  EXPECT_EQ(cache.Get("b"), nullptr);
  EXPECT_EQ(*cache.Get("a"), "1");
  EXPECT_EQ(*cache.Get("c"), "3");
}

TEST(LruCacheTest, StaysWithinItsBytesAndSkipsValuesLargerThanAll) {
  LruCache<std::string> cache(100, 10);
  cache.Put("a", Value("1"), 4);
  cache.Put("b", Value("2"), 4);
  cache.Put("c", Value("3"), 4);  // 12 bytes: "a" goes
  EXPECT_EQ(cache.Get("a"), nullptr);
  EXPECT_NE(cache.Get("b"), nullptr);
  cache.Put("huge", Value("x"), 11);
  EXPECT_EQ(cache.Get("huge"), nullptr);
  EXPECT_NE(cache.Get("c"), nullptr);
}

TEST(LruCacheTest, EraseFreesItsBytes) {
  LruCache<std::string> cache(100, 10);
  cache.Put("a", Value("1"), 6);
  cache.Erase("a");
  cache.Erase("never-there");
  EXPECT_EQ(cache.Get("a"), nullptr);
  cache.Put("b", Value("2"), 6);
  cache.Put("c", Value("3"), 4);  // fits only because "a" gave its 6 bytes back
  EXPECT_NE(cache.Get("b"), nullptr);
  EXPECT_NE(cache.Get("c"), nullptr);
}

TEST(LruCacheTest, PutReplacesAndReadersKeepTheirValue) {
  LruCache<std::string> cache(10, 100);
  cache.Put("k", Value("old"), 50);
  std::shared_ptr<const std::string> held = cache.Get("k");
  cache.Put("k", Value("new"), 50);
  cache.Put("other", Value("o"), 50);  // fits only because the replaced value's bytes were released
  EXPECT_EQ(*held, "old");
  EXPECT_EQ(*cache.Get("k"), "new");
  EXPECT_NE(cache.Get("other"), nullptr);
}

TEST(LruCacheTest, PutHandsBackWhatItReplacedAndEvicted) {
  LruCache<std::string> cache(2, 10);
  EXPECT_TRUE(cache.Put("a", Value("1"), 4).empty());
  std::weak_ptr<const std::string> first = cache.Get("a");
  auto replaced = cache.Put("a", Value("2"), 4);
  ASSERT_EQ(replaced.size(), 1u);
  EXPECT_EQ(*replaced[0], "1");
  EXPECT_FALSE(first.expired());  // alive until the caller lets go
  replaced.clear();
  EXPECT_TRUE(first.expired());
  EXPECT_TRUE(cache.Put("b", Value("3"), 4).empty());
  auto evicted = cache.Put("c", Value("4"), 4);  // 12 bytes and three entries: "a" goes
  ASSERT_EQ(evicted.size(), 1u);
  EXPECT_EQ(*evicted[0], "2");
  auto too_large = cache.Put("huge", Value("x"), 11);  // never kept: handed back at once
  ASSERT_EQ(too_large.size(), 1u);
  EXPECT_EQ(*too_large[0], "x");
}

}  // namespace
}  // namespace serac
