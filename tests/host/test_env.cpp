#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>

#include "symmem/env.hpp"
#include "symmem/error.hpp"

using namespace symmem;

static EnvGetter env(std::map<std::string, std::string> m) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(m));
  return [shared](const char* n) -> const char* {
    auto it = shared->find(n);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

static std::string error_of(const EnvGetter& g) {
  try {
    bootstrap_config_from_env(g);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(Env, NothingSetIsOneRank) {
  BootstrapConfig c = bootstrap_config_from_env(env({}));
  EXPECT_EQ(c.rank, 0);
  EXPECT_EQ(c.world_size, 1);
}

TEST(Env, Torchrun) {
  BootstrapConfig c = bootstrap_config_from_env(env({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
      {"LOCAL_WORLD_SIZE", "4"}, {"MASTER_ADDR", "10.1.2.3"}, {"MASTER_PORT", "29500"}, {"SYMMEM_RANKS_PER_GPU", "2"}}));
  EXPECT_EQ(c.rank, 3);
  EXPECT_EQ(c.world_size, 8);
  EXPECT_EQ(c.local_rank, 1);
  EXPECT_EQ(c.local_world_size, 4);
  EXPECT_EQ(c.master_addr, "10.1.2.3");
  EXPECT_EQ(c.master_port, 29500);
  EXPECT_EQ(c.ranks_per_gpu, 2);
}

TEST(Env, OpenMpiOnOneHostDerivesAPort) {
  auto g = env({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}, {"OMPI_MCA_ess_base_jobid", "12345"}});
  BootstrapConfig a = bootstrap_config_from_env(g);
  EXPECT_EQ(a.rank, 1);
  EXPECT_EQ(a.world_size, 2);
  EXPECT_GE(a.master_port, 20000);
  EXPECT_LT(a.master_port, 40000);
  EXPECT_EQ(bootstrap_config_from_env(g).master_port, a.master_port);
}

TEST(Env, UnderTorchrunsAgentStoreThePortIsDerived) {
  // torchrun's agent listens on MASTER_PORT itself: every rank derives the same other port from the
  // run id and MASTER_PORT; without the agent's flag MASTER_PORT is symmem's, as before.
  auto of = [](const char* rank, const char* run, const char* port, const char* agent) {
    return bootstrap_config_from_env(env({{"RANK", rank}, {"WORLD_SIZE", "4"}, {"MASTER_PORT", port},
                                          {"TORCHELASTIC_RUN_ID", run}, {"TORCHELASTIC_USE_AGENT_STORE", agent}}));
  };
  BootstrapConfig a = of("0", "none", "29500", "True"), b = of("3", "none", "29500", "True");
  EXPECT_EQ(a.agent_port, 29500);
  EXPECT_NE(a.master_port, 29500);
  EXPECT_GE(a.master_port, 20000);
  EXPECT_LT(a.master_port, 40000);
  EXPECT_EQ(b.master_port, a.master_port);
  EXPECT_NE(of("0", "none", "29501", "True").master_port, a.master_port);
  EXPECT_NE(of("0", "other", "29500", "True").master_port, a.master_port);
  BootstrapConfig plain = of("0", "none", "29500", "False");
  EXPECT_EQ(plain.master_port, 29500);
  EXPECT_EQ(plain.agent_port, 0);
}

TEST(Env, ErrorsNameTheVariable) {
  EXPECT_NE(error_of(env({{"RANK", "1"}})).find("WORLD_SIZE"), std::string::npos);
  EXPECT_NE(error_of(env({{"WORLD_SIZE", "2"}})).find("RANK"), std::string::npos);
  EXPECT_NE(error_of(env({{"RANK", "x"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}})).find("RANK='x' is not an integer"), std::string::npos);
  EXPECT_NE(error_of(env({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}})).find("out of range"), std::string::npos);
  EXPECT_NE(error_of(env({{"RANK", "0"}, {"WORLD_SIZE", "2"}})).find("MASTER_PORT is not set"), std::string::npos);
  EXPECT_NE(error_of(env({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}})).find("MASTER_PORT=70000"), std::string::npos);
}

TEST(Env, Settings) {
  Settings s = settings_from_env(env({{"SYMMEM_TIMEOUT_MS", "250"}, {"SYMMEM_DEBUG_CHECKS", "1"}}));
  EXPECT_EQ(s.device_timeout_ms, 250);
  EXPECT_TRUE(s.debug_checks);
  EXPECT_THROW(settings_from_env(env({{"SYMMEM_TIMEOUT_MS", "0"}})), InvalidArgument);
}

TEST(Env, EveryVariableIsDocumented) {
  for (const EnvVar& v : env_vars()) {
    EXPECT_NE(v.name, nullptr);
    EXPECT_GT(std::string(v.doc).size(), 10u) << v.name;
  }
}

// Cross-rank refusals (moe::ExpertParallel's config) name the settings that differ.
TEST(Env, DifferingFieldsNameTheSettings) {
  EXPECT_EQ(detail::differing_fields("a=1 b=2", "a=1 b=2"), "");
  EXPECT_EQ(detail::differing_fields("a=1 b=2 c=3", "a=1 b=5 c=4"), "b, c");
  EXPECT_EQ(detail::differing_fields("a=1", "a=1 b=2"), "b");  // (a field one side lacks)
  EXPECT_EQ(detail::differing_fields("x=1 flag", "x=2 other"), "x, flag");
}

// A constructor's refusal gathers every reason, "; "-separated; a malformed numeric knob adds its
// own and reads as unset.
TEST(Env, RefusalsGatherTheirReasons) {
  std::string why;
  detail::add_reason(why, "first");
  EXPECT_EQ(why, "first");
  detail::add_reason(why, "second");
  EXPECT_EQ(why, "first; second");
  setenv("SYMMEM_TEST_KNOB", "99", 1);
  EXPECT_EQ(detail::knob_number(why, "SYMMEM_TEST_KNOB", 0, 8, -1), -1);
  EXPECT_NE(why.find("first; second; "), std::string::npos) << why;
  EXPECT_NE(why.find("SYMMEM_TEST_KNOB"), std::string::npos) << why;
  setenv("SYMMEM_TEST_KNOB", "5", 1);
  std::string none;
  EXPECT_EQ(detail::knob_number(none, "SYMMEM_TEST_KNOB", 0, 8, -1), 5);
  EXPECT_EQ(none, "");
  unsetenv("SYMMEM_TEST_KNOB");
}

// Every SYMMEM_ variable that symmem's sources name in a string (the library, its tools, the
// benchmark, the Python package) is in env_vars(), the documented list (session 63 found
// SYMMEM_OVERLAP_RS_STRADDLE and the MoE lines' knobs read but not listed).
TEST(Env, EveryVariableTheSourcesNameIsListed) {
  namespace fs = std::filesystem;
  std::set<std::string> listed;
  for (const EnvVar& v : env_vars()) listed.insert(v.name);
  const std::regex name("\"(SYMMEM_[A-Z0-9_]+)\"");
  std::map<std::string, std::string> missing;  // name -> a file naming it
  size_t files = 0;
  for (const char* dir : {"src", "include", "bench", "tools", "python/symmem", "python/src"}) {
    const fs::path root = fs::path(SYMMEM_SOURCE_DIR) / dir;
    if (!fs::exists(root)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".cu" && ext != ".cuh" && ext != ".hpp" && ext != ".h" && ext != ".py")) continue;
      ++files;
      std::ifstream in(e.path());
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it)
        if (!listed.count((*it)[1].str())) missing.emplace((*it)[1].str(), e.path().string());
    }
  }
  EXPECT_GT(files, 50u) << "the sources were not found under " << SYMMEM_SOURCE_DIR;
  for (const auto& [var, file] : missing) ADD_FAILURE() << var << " (named in " << file << ") is not in env_vars(): add it to src/runtime/env.cpp";
}

// A SYMMEM_ name one or two edits from a setting is named with the setting meant (Context warns of
// it: the variable would be ignored without a word); settings, other variables and SYMMEM_ names
// far from any setting (the tools' own) are not.
TEST(Env, MisspeltSettingsAreNamed) {
  const auto got = detail::misspelt_settings({"SYMMEM_DEBUG_CHECK", "SYMMEM_DEBUG_CHECKS", "SYMMEM_TIMOUT_MS", "PATH", "SYMMEM_TEST_RANKS_PER_GPU",
                                              "SYMMEM_CTEST_STOP_S", "SYMEM_DEBUG", "SYMMEM_HEAP_CHUNK_MiB", "SYMMEM_PDL"});
  EXPECT_EQ(got, (std::vector<std::pair<std::string, std::string>>{{"SYMMEM_DEBUG_CHECK", "SYMMEM_DEBUG_CHECKS"},
                                                                   {"SYMMEM_TIMOUT_MS", "SYMMEM_TIMEOUT_MS"},
                                                                   {"SYMMEM_HEAP_CHUNK_MiB", "SYMMEM_HEAP_CHUNK_MB"}}));
}
