// plan_memory: the execution plan's memory — every intermediate buffer that some kernel writes to memory gets a byte
// offset in one workspace per call; buffers whose lifetimes (first writing kernel .. last reading kernel) do not
// overlap share bytes. Fills LoopProgram::workspace_offsets and workspace_bytes. Needs kernels (fuse_kernels).
//
// Buffers of concrete size are packed first, from offset 0, sharing bytes where lifetimes allow. Buffers whose size
// names size symbols follow, each in its own slot (offsets are then expressions over the symbols, each rounded up to
// kWorkspaceAlignment): which of two symbolic sizes is larger depends on the values, so sharing would need a packing
// per binding, and a graph with symbols is compiled once for all of them.
#pragma once

#include "ir/loop.h"

namespace hi {

void plan_memory(LoopProgram& program);

}  // namespace hi
