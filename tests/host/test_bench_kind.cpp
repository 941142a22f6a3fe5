// The machine kind symmem-bench's JSON names where --kind is not given (bench/device_kind.hpp).
#include <gtest/gtest.h>

#include "../../bench/device_kind.hpp"

using symmem::bench::device_kind_from;

TEST(BenchKind, NamedAsTheLentMachines) {
  EXPECT_EQ(device_kind_from("NVIDIA H200", 4), "nvidia-h200-x4");
  EXPECT_EQ(device_kind_from("NVIDIA H100 80GB HBM3", 8), "nvidia-h100-x8");
  EXPECT_EQ(device_kind_from("NVIDIA A100-SXM4-80GB", 2), "nvidia-a100-x2");
  EXPECT_EQ(device_kind_from("Tesla V100-SXM2-16GB", 1), "nvidia-v100-x1");
  EXPECT_EQ(device_kind_from("NVIDIA GeForce RTX 4090", 2), "nvidia-4090-x2");
  EXPECT_EQ(device_kind_from("", 0), "nvidia-unknown-x0");
}
