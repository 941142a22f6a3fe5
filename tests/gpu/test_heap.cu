#include "gpu_env.hpp"

using namespace symmem;
using namespace symmem::test;

TEST(Heap, EveryRankMapsEveryPeer) {
  const int n = heap().team().size(), me = heap().team().rank();
  for (size_t bytes : {size_t(1), size_t(4097), size_t(3) << 20}) {
    SymmetricBuffer b = heap().alloc(bytes);
    ASSERT_EQ(b.bytes(), bytes);
    ASSERT_EQ(b.nranks(), n);
    ASSERT_EQ(b.rank(), me);
    EXPECT_TRUE(b.contains(b.ptr(), bytes));
    EXPECT_FALSE(b.contains(b.ptr(), bytes + 1));
    EXPECT_TRUE(heap().find(static_cast<char*>(b.ptr()) + bytes - 1).valid());
    // Each rank writes its own random data; after a barrier every rank reads every peer's.
    upload(b.ptr(), random_bytes(bytes, 100 + me));
    SYMMEM_CUDA_CHECK(cudaDeviceSynchronize());
    stream::barrier(b, nullptr);
    ctx()->synchronize(nullptr, "barrier");
    for (int p = 0; p < n; ++p) {
      ASSERT_NE(b.peer_ptr(p), nullptr);
      EXPECT_EQ(first_diff(download(b.peer_ptr(p), bytes), random_bytes(bytes, 100 + p)), -1) << "peer " << p << " bytes " << bytes;
      // Signal pads start zeroed.
      auto pad_bytes = download(b.peer_signal_pad(p), 4096);
      EXPECT_EQ(first_diff(pad_bytes, std::vector<uint8_t>(4096, 0)), -1);
    }
    stream::barrier(b, nullptr);
    ctx()->synchronize(nullptr);
    heap().free(b);
    EXPECT_FALSE(b.valid());
  }
}

TEST(Heap, ManyAllocationsAndFrees) {
  std::vector<SymmetricBuffer> v;
  for (int i = 0; i < 24; ++i) v.push_back(heap().alloc(size_t(64) << (i % 12)));
  for (auto& b : v) heap().free(b);
  SymmetricBuffer again = heap().alloc(1 << 20);
  EXPECT_TRUE(again.valid());
  heap().free(again);
}

TEST(Heap, SizeMismatchRaisesOnEveryRank) {
  if (heap().team().size() < 2) GTEST_SKIP() << "needs 2 ranks";
  try {
    heap().alloc(heap().team().rank() == 0 ? 1024 : 2048);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("sizes differ across ranks"), std::string::npos) << m;
    EXPECT_NE(m.find("rank 0 asked 1024"), std::string::npos) << m;
  }
}

TEST(Heap, OutOfMemoryRaisesOnEveryRank) {
  try {
    heap().alloc(size_t(1) << 46);  // 64 TiB
    FAIL() << "expected CudaError";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("out of device memory"), std::string::npos) << e.what();
  }
  SymmetricBuffer b = heap().alloc(4096);  // the heap still works
  heap().free(b);
}

TEST(Heap, BadArguments) {
  EXPECT_THROW(heap().alloc(0), InvalidArgument);
  SymmetricBuffer b = heap().alloc(256);
  EXPECT_THROW(b.peer_ptr(heap().team().size()), InvalidArgument);
  EXPECT_THROW(b.peer_ptr(-1), InvalidArgument);
  heap().free(b);
  EXPECT_THROW(heap().free(b), InvalidArgument);
  SymmetricBuffer empty;
  EXPECT_THROW(empty.ptr(), InvalidArgument);
}
