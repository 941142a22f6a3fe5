#pragma once
// Symbol visibility: the library builds with -fvisibility=hidden; public entry points carry SYMMEM_API.
#if defined(SYMMEM_BUILDING_LIBRARY)
#define SYMMEM_API __attribute__((visibility("default")))
#else
#define SYMMEM_API
#endif

// Device-only code sits behind SYMMEM_DEVICE_COMPILE so g++ can parse every public header.
#if defined(__CUDACC__)
#define SYMMEM_HOST_DEVICE __host__ __device__
#define SYMMEM_DEVICE __device__
#define SYMMEM_DEVICE_COMPILE 1
#else
#define SYMMEM_HOST_DEVICE
#define SYMMEM_DEVICE
#endif
