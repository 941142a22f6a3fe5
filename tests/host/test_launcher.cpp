#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "symmem/error.hpp"
#include "symmem/launcher.hpp"

using namespace symmem;

static std::string run(const std::string& cmd, int* code) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, k);
  int st = pclose(p);
  *code = WEXITSTATUS(st);
  return out;
}

namespace {
/// Processes whose command line contains `marker` (the tests give their sleeps unique lengths).
int count_processes(const std::string& marker) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (cmd.find(marker) != std::string::npos && cmd.find("count_processes") == std::string::npos) ++n;
  }
  return n;
}
/// A sleep of `secs` (a decimal such as "32.15") whose length also carries this test process's
/// id: markers stay unique when several test binaries run at once (ctest -j, two CI jobs), which
/// otherwise count each other's processes and signal a launcher before it is ready.
std::string unique_sleep(const std::string& secs) {
  char pid[16];
  std::snprintf(pid, sizeof(pid), "%07d", static_cast<int>(getpid()) % 10000000);  // fixed width: no marker inside another
  return "sleep " + secs + pid;
}
/// Waits up to `secs` for no process with `marker` to be left.
bool none_left(const std::string& marker, double secs = 5.0) {
  auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < secs) {
    if (count_processes(marker) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return count_processes(marker) == 0;
}
/// Waits up to 10 s for at least n processes with `marker`; returns the count that ended the wait
/// (a second count could miss a process in the middle of its exec, whose cmdline then reads empty:
/// CI once saw 2 of 3 that way, right after 3).
int wait_for(const std::string& marker, int n) {
  int c = count_processes(marker);
  for (int i = 0; i < 200 && c < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    c = count_processes(marker);
  }
  return c;
}
/// Starts symmem-run with `args` under sh, in its own process group; returns its pid.
pid_t start_launcher(const std::string& args) {
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", (std::string("exec ") + SYMMEM_RUN + " " + args + " > /dev/null 2>&1").c_str(), nullptr);
    _exit(127);
  }
  return pid;
}
}  // namespace

TEST(Launcher, ParsesArguments) {
  std::vector<std::string> prog;
  LaunchOptions o = parse_launch_args({"-n", "4", "--ranks-per-gpu", "2", "prog", "-n", "x"}, &prog);
  EXPECT_EQ(o.nranks, 4);
  EXPECT_EQ(o.ranks_per_gpu, 2);
  EXPECT_EQ(prog, (std::vector<std::string>{"prog", "-n", "x"}));
  EXPECT_THROW(parse_launch_args({"-n", "4"}, &prog), InvalidArgument);
  EXPECT_THROW(parse_launch_args({"-n", "zero", "prog"}, &prog), InvalidArgument);
  EXPECT_THROW(parse_launch_args({"--bogus", "prog"}, &prog), InvalidArgument);
}

TEST(Launcher, SetsTorchrunEnvironmentAndPrefixesOutput) {
  int code = -1;
  std::string out = run(std::string(SYMMEM_RUN) +
                            " -n 3 --ranks-per-gpu 3 sh -c 'echo r=$RANK w=$WORLD_SIZE l=$LOCAL_RANK p=$MASTER_PORT k=$SYMMEM_RANKS_PER_GPU nvls=$NCCL_NVLS_ENABLE'",
                        &code);
  EXPECT_EQ(code, 0) << out;
  for (int r = 0; r < 3; ++r)
    EXPECT_NE(out.find("[rank " + std::to_string(r) + "] r=" + std::to_string(r) + " w=3 l=" + std::to_string(r)), std::string::npos) << out;
  EXPECT_NE(out.find("k=3 nvls=0"), std::string::npos) << out;
}

TEST(Launcher, OutputWrittenRightBeforeExitIsKept) {
  // Ranks that print and exit at once (the last line without a newline): every line reaches the
  // launcher's output, however the exits and the reads interleave (they were lost when the last
  // rank exited between the launcher's poll and its waitpid).
  for (int rep = 0; rep < 20; ++rep) {
    int code = -1;
    std::string out = run(std::string(SYMMEM_RUN) + " -n 4 sh -c 'printf \"first $RANK\\nlast $RANK\"'", &code);
    ASSERT_EQ(code, 0) << out;
    for (int r = 0; r < 4; ++r) {
      ASSERT_NE(out.find("[rank " + std::to_string(r) + "] first " + std::to_string(r) + "\n"), std::string::npos) << "rep " << rep << ":\n" << out;
      ASSERT_NE(out.find("[rank " + std::to_string(r) + "] last " + std::to_string(r) + "\n"), std::string::npos) << "rep " << rep << ":\n" << out;
    }
  }
}

TEST(Launcher, FirstFailureEndsTheOthersAndSetsTheExitCode) {
  int code = -1;
  auto t0 = std::chrono::steady_clock::now();
  const std::string marker = unique_sleep("30.2718");
  std::string out = run(std::string(SYMMEM_RUN) + " -n 3 sh -c 'if [ $RANK = 1 ]; then exit 7; fi; " + marker + "'", &code);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(code, 7) << out;
  EXPECT_NE(out.find("rank 1 exited with status 7"), std::string::npos) << out;
  EXPECT_LT(secs, 10.0);
  EXPECT_TRUE(none_left(marker)) << "the other ranks were left running";
}

TEST(Launcher, MissingProgram) {
  int code = -1;
  std::string out = run(std::string(SYMMEM_RUN) + " -n 2 /nonexistent/program", &code);
  EXPECT_EQ(code, 127) << out;
  EXPECT_NE(out.find("cannot run '/nonexistent/program'"), std::string::npos) << out;
}

TEST(Launcher, FailureEndsTheOtherRanksChildrenToo) {
  int code = -1;
  const std::string marker = unique_sleep("31.4161");
  run(std::string(SYMMEM_RUN) + " -n 3 sh -c 'if [ $RANK = 1 ]; then sleep 0.3; exit 3; fi; " + marker + " & wait'", &code);
  EXPECT_EQ(code, 3);
  EXPECT_TRUE(none_left(marker)) << "the other ranks' children were left running";
}

TEST(Launcher, SignalsToTheLauncherEndEveryRank) {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    const std::string marker = unique_sleep("32." + std::to_string(sig) + "0");
    pid_t pid = start_launcher("-n 3 sh -c '" + marker + " & wait'");
    ASSERT_GE(wait_for(marker, 7), 7) << "signal " << sig;  // the launcher, 3 shells, 3 sleeps
    kill(pid, sig);
    int st = 0;
    waitpid(pid, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 128 + sig) << "signal " << sig << " status " << st;
    EXPECT_TRUE(none_left(marker)) << "signal " << sig << " left ranks running";
  }
}

TEST(Launcher, KilledLauncherTakesItsRanksAlong) {
  const std::string marker = unique_sleep("33.777");
  pid_t pid = start_launcher("-n 2 " + marker);
  ASSERT_GE(wait_for(marker, 3), 3);  // the launcher and 2 ranks
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  EXPECT_TRUE(none_left(marker)) << "ranks outlived a killed launcher";
}

TEST(Launcher, ClosedOutputPipeEndsTheJob) {
  int code = -1;
  auto t0 = std::chrono::steady_clock::now();
  const std::string marker = unique_sleep("34.55");
  std::string out = run("sh -c '" + std::string(SYMMEM_RUN) + " -n 2 sh -c \"while true; do echo line; sleep 0.01; done; " + marker + "\" | head -1'", &code);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_NE(out.find("line"), std::string::npos) << out;
  EXPECT_TRUE(none_left(marker)) << "ranks kept running after the output closed";
}

TEST(Launcher, HelpAndEnv) {
  int code = -1;
  std::string out = run(std::string(SYMMEM_RUN) + " --help", &code);
  EXPECT_EQ(code, 0);
  EXPECT_NE(out.find("usage: symmem-run -n N"), std::string::npos) << out;
  EXPECT_NE(out.find("process group"), std::string::npos) << out;
  out = run(std::string(SYMMEM_RUN) + " --env", &code);
  EXPECT_EQ(code, 0);
  EXPECT_NE(out.find("SYMMEM_TIMEOUT_MS (default 20000)"), std::string::npos) << out;
  EXPECT_NE(out.find("SYMMEM_JOB_TOKEN"), std::string::npos) << out;
}

TEST(Logging, DebugLevelsPrintRankPrefixedLines) {
  char self[4096];
  ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(k, 0);
  self[k] = 0;
  int code = -1;
  std::string out = run(std::string("SYMMEM_DEBUG=TRACE ") + self + " --gtest_filter=Bootstrap.SingleRankNeedsNoPort", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("[symmem rank 0] INFO: joined the job: rank 0 of 1"), std::string::npos) << out;
  EXPECT_NE(out.find("TRACE: waiting up to"), std::string::npos) << out;
  out = run(std::string("SYMMEM_DEBUG=LOUD ") + self + " --gtest_filter=Bootstrap.SingleRankNeedsNoPort", &code);
  EXPECT_NE(out.find("SYMMEM_DEBUG='LOUD' is not a log level; use WARN, INFO or TRACE"), std::string::npos) << out;
  out = run(self + std::string(" --gtest_filter=Bootstrap.SingleRankNeedsNoPort"), &code);
  EXPECT_EQ(out.find("INFO:"), std::string::npos) << "logging is off by default: " << out;
}
