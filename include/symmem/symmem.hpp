#pragma once
// symmem: GPU-to-GPU communication over symmetric memory.
#include "symmem/bootstrap.hpp"
#include "symmem/collectives.hpp"
#include "symmem/context.hpp"
#include "symmem/env.hpp"
#include "symmem/error.hpp"
#include "symmem/heap.hpp"
#include "symmem/launcher.hpp"
#include "symmem/moe.hpp"
#include "symmem/overlap.hpp"
#include "symmem/stream.hpp"
#include "symmem/team.hpp"
#include "symmem/types.hpp"
