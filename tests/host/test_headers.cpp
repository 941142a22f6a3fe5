// Every public header is also compiled alone (tests/CMakeLists.txt); this checks the umbrella.
#include <gtest/gtest.h>

#include "symmem/symmem.hpp"

TEST(Headers, UmbrellaParsesUnderTheHostCompiler) {
  EXPECT_TRUE((std::is_trivially_copyable_v<symmem::DeviceHandle>));
  EXPECT_TRUE((std::is_trivially_copyable_v<symmem::DeviceErrorRecord>));
}
