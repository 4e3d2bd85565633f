// SPDX-License-Identifier: GPL-2.0
//
// The command `perf-buildid record` profiles: forked at once and held before exec until the
// events are open (they are enabled on exec), then let go, as perf's workload. The object owns
// the child: a child still there when it goes is killed and reaped.
#ifndef PBID_WORKLOAD_H_
#define PBID_WORKLOAD_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "pbid/result.h"

namespace pbid {

class Workload {
 public:
  // Forks the child, which waits. stdout_to_stderr: the child writes its standard output to
  // our standard error (when ours is the perf.data stream).
  static Result<std::unique_ptr<Workload>> Start(const std::vector<std::string>& argv,
                                                 bool stdout_to_stderr);
  ~Workload();
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  pid_t pid() const { return pid_; }
  // Lets the child exec the command. An error, with exec's errno, when it cannot run; the
  // child is reaped then.
  Status Go();
  // Whether the child has exited, without waiting; its wait status in *status.
  bool Exited(int* status);
  // SIGTERM, then SIGKILL if it is still there after timeout_ms: a command that ignores
  // SIGTERM must not keep the recorder from exiting. Returns the wait status.
  int Terminate(int timeout_ms);

 private:
  Workload() = default;
  void Kill();

  pid_t pid_ = -1;  // -1 once reaped
  int go_fd_ = -1, err_fd_ = -1;
  std::string name_;
};

}  // namespace pbid

#endif  // PBID_WORKLOAD_H_
