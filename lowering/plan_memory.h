// plan_memory: the execution plan's memory — every intermediate buffer that some kernel writes to memory gets a byte
// offset in one workspace per call; buffers whose lifetimes (first writing kernel .. last reading kernel) do not
// overlap share bytes. Fills LoopProgram::workspace_offsets and workspace_bytes. Needs kernels (fuse_kernels) and
// concrete sizes for intermediates; throws std::invalid_argument naming the buffer otherwise.
#pragma once

#include "ir/loop.h"

namespace hi {

void plan_memory(LoopProgram& program);

}  // namespace hi
