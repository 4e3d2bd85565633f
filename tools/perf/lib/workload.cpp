// SPDX-License-Identifier: GPL-2.0
#include "pbid/workload.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace pbid {

Result<std::unique_ptr<Workload>> Workload::Start(const std::vector<std::string>& argv,
                                                  bool stdout_to_stderr) {
  if (argv.empty())
    return Error::Of(ErrorKind::kInvalidArgument, "command", "no command to run");
  int go[2], err[2];
  if (pipe2(go, O_CLOEXEC) < 0)
    return Error::Sys("pipe", errno, "cannot create");
  if (pipe2(err, O_CLOEXEC) < 0) {
    int e = errno;
    close(go[0]);
    close(go[1]);
    return Error::Sys("pipe", e, "cannot create");
  }
  // Built before the fork: the child only calls async-signal-safe functions.
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {go[0], go[1], err[0], err[1]})
      close(fd);
    return Error::Sys("fork", e, "cannot fork");
  }
  if (pid == 0) {
    close(go[1]);
    close(err[0]);
    if (stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
      _exit(127);
    char c;
    // Wait until the events are open: exec then enables them (enable_on_exec).
    if (read(go[0], &c, 1) != 1)
      _exit(127);
    execvp(args[0], args.data());
    int e = errno;
    ssize_t w = write(err[1], &e, sizeof(e));
    (void)w;
    _exit(127);
  }
  close(go[0]);
  close(err[1]);
  std::unique_ptr<Workload> w(new Workload());
  w->pid_ = pid;
  w->go_fd_ = go[1];
  w->err_fd_ = err[0];
  w->name_ = argv[0];
  return w;
}

Workload::~Workload() {
  Kill();
  if (go_fd_ >= 0)
    close(go_fd_);
  if (err_fd_ >= 0)
    close(err_fd_);
}

void Workload::Kill() {
  if (pid_ <= 0)
    return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

Status Workload::Go() {
  char go = 1;
  if (write(go_fd_, &go, 1) != 1) {
    Error e = Error::Sys("start command", errno, "failed");
    Kill();
    return e;
  }
  // The error pipe closes on a successful exec (O_CLOEXEC); the child writes errno otherwise.
  int e = 0;
  if (read(err_fd_, &e, sizeof(e)) == sizeof(e)) {
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    return Error::Sys(name_, e, "cannot run");
  }
  return Ok();
}

bool Workload::Exited(int* status) {
  if (pid_ <= 0)
    return false;
  if (waitpid(pid_, status, WNOHANG) != pid_)
    return false;
  pid_ = -1;
  return true;
}

int Workload::Terminate(int timeout_ms) {
  int status = 0;
  if (pid_ <= 0)
    return status;
  kill(pid_, SIGTERM);
  for (int waited = 0; waited < timeout_ms; waited += 10) {
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      pid_ = -1;
      return status;
    }
    usleep(10 * 1000);
  }
  kill(pid_, SIGKILL);
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return status;
}

}  // namespace pbid
