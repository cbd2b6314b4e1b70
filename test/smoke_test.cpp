#include <gtest/gtest.h>
#include <embed/embed.hpp>
namespace {
TEST(Smoke, Values) {
  embed::PythonRandom r(42);
  EXPECT_EQ(r.random(), 0.6394267984578837);
  auto t = embed::make_table(512, 64, embed::SEED);
  EXPECT_EQ(t(0,0), 0.11666082688204615);
  EXPECT_EQ(t(0,1), 0.15487907810030288);
  EXPECT_EQ(t(137,5), -0.222715908228325);
  EXPECT_EQ(t(511,63), -0.46931364710400825);
  embed::Vector h = t.row(137).transpose();
  auto l = embed::logits(t, h);
  EXPECT_EQ(l.size(), 512);
  EXPECT_EQ(embed::dot(t.row(1), t.row(2)), embed::dot(t.row(1).transpose(), t.row(2).transpose()));
  auto c = embed::nearest_by_cosine(t, 137, 5);
  auto d = embed::nearest_by_dot(t, 137, 5);
  for (auto x : c) { std::cout << x << " "; }
  for (auto x : d) { std::cout << x << " "; }
}
}
