// SPDX-License-Identifier: GPL-2.0
//
// When libdebuginfod is loaded. ctest runs each test in a process of its own, so what one
// test loads cannot show up in another.
#include "debuginfod_client.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "util/test_util.h"

namespace pbid {
namespace {

bool Loaded() {
  void* h = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr)
    return false;
  dlclose(h);
  return true;
}

TEST(DebuginfodClientTest, WithoutServersTheLibraryStaysUnloaded) {
  unsetenv("DEBUGINFOD_URLS");
  auto c = DebuginfodClient::Create("");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_FALSE((*c)->Enabled());
  // Nothing to ask: no query, no error.
  EXPECT_FALSE((*c)->Find(*BuildId::FromHex("00112233445566778899aabbccddeeff00112233"),
                          DebuginfodClient::Kind::kDebuginfo));
  EXPECT_EQ(0, (*c)->queries());
  if (!testing::kLibdwLoadsLibdebuginfod) {
    EXPECT_FALSE(Loaded());
  }
}

TEST(DebuginfodClientTest, AnEmptyServerListIsNone) {
  setenv("DEBUGINFOD_URLS", "", 1);
  auto c = DebuginfodClient::Create("");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_FALSE((*c)->Enabled());
  if (!testing::kLibdwLoadsLibdebuginfod) {
    EXPECT_FALSE(Loaded());
  }
}

TEST(DebuginfodClientTest, AServerLoadsTheLibrary) {
  unsetenv("DEBUGINFOD_URLS");
  if (!testing::kLibdwLoadsLibdebuginfod) {
    ASSERT_FALSE(Loaded());
  }
  // No query is made: the port need not answer.
  auto c = DebuginfodClient::Create("http://127.0.0.1:9");
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  EXPECT_TRUE((*c)->Enabled());
  EXPECT_EQ("http://127.0.0.1:9", (*c)->urls());
  EXPECT_TRUE(Loaded());
  // A second client, with the servers the first one left in DEBUGINFOD_URLS.
  auto d = DebuginfodClient::Create("");
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  EXPECT_TRUE((*d)->Enabled());
}

}  // namespace
}  // namespace pbid
