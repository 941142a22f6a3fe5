#include <gtest/gtest.h>

#include <cstdio>
#include <string>

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

TEST(Launcher, FirstFailureEndsTheOthersAndSetsTheExitCode) {
  int code = -1;
  auto t0 = std::chrono::steady_clock::now();
  std::string out = run(std::string(SYMMEM_RUN) + " -n 3 sh -c 'if [ $RANK = 1 ]; then exit 7; fi; sleep 30'", &code);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(code, 7) << out;
  EXPECT_NE(out.find("rank 1 exited with status 7"), std::string::npos) << out;
  EXPECT_LT(secs, 10.0);
}

TEST(Launcher, MissingProgram) {
  int code = -1;
  std::string out = run(std::string(SYMMEM_RUN) + " -n 2 /nonexistent/program", &code);
  EXPECT_EQ(code, 127) << out;
  EXPECT_NE(out.find("cannot run '/nonexistent/program'"), std::string::npos) << out;
}
