// SPDX-License-Identifier: GPL-2.0
//
// The workload against real commands: held until Go, an exec failure reported with its
// errno, SIGTERM then SIGKILL, and no child left behind.
#include "pbid/workload.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>

namespace pbid {
namespace {

int WaitExit(Workload& w) {
  int status = 0;
  for (int i = 0; i < 1000 && !w.Exited(&status); i++)
    usleep(10 * 1000);
  return status;
}

TEST(WorkloadTest, RunsTheCommandOnlyAfterGo) {
  auto w = Workload::Start({"sh", "-c", "exit 7"}, false);
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  usleep(50 * 1000);
  int status = 0;
  EXPECT_FALSE((*w)->Exited(&status)) << "the child ran before Go";
  ASSERT_TRUE((*w)->Go().ok());
  status = WaitExit(**w);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(7, WEXITSTATUS(status));
}

TEST(WorkloadTest, ExecFailureCarriesErrno) {
  auto w = Workload::Start({"/nonexistent/command"}, false);
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  Status st = (*w)->Go();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(ENOENT, st.error().sys_errno);
  EXPECT_EQ("/nonexistent/command", st.error().field);
  EXPECT_EQ(ErrorKind::kIo, st.error().kind);
}

TEST(WorkloadTest, TerminateKillsACommandThatIgnoresSigterm) {
  auto w = Workload::Start({"sh", "-c", "trap '' TERM; exec sleep 10"}, false);
  ASSERT_TRUE(w.ok()) << w.error().ToString();
  ASSERT_TRUE((*w)->Go().ok());
  usleep(200 * 1000);  // let sh set its trap (SIG_IGN survives the exec)
  auto t0 = std::chrono::steady_clock::now();
  int status = (*w)->Terminate(300);
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(SIGKILL, WTERMSIG(status));
  EXPECT_LT(ms, 5000);
}

TEST(WorkloadTest, AChildHeldAtStartDiesWithTheObject) {
  pid_t pid;
  {
    auto w = Workload::Start({"sleep", "10"}, false);
    ASSERT_TRUE(w.ok()) << w.error().ToString();
    pid = (*w)->pid();
    ASSERT_EQ(0, kill(pid, 0));
  }
  EXPECT_EQ(-1, kill(pid, 0)) << "child " << pid << " left behind";
  EXPECT_EQ(ESRCH, errno);
}

}  // namespace
}  // namespace pbid
