#pragma once
// symmem's device API (header-only): put/get at thread, warp and block scope, signals, remote
// atomics, bounded waits, team barriers and fences, and LL puts and gets (ll.cuh: the flag in the
// data, for small messages). Include from .cu files.
#include "symmem/device/atomics.cuh"
#include "symmem/device/barrier.cuh"
#include "symmem/device/copy.cuh"
#include "symmem/device/handle.hpp"
#include "symmem/device/ll.cuh"
#include "symmem/device/p2p.cuh"
#include "symmem/device/wait.cuh"
