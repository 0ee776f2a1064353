// src/dispatch/b2b_dispatch.hpp — the back-to-back GEMM's dispatch (part of the dispatch layer,
// dispatch.hpp): runs a b2b::Plan on the kernels or the unfused cuBLASLt pair.
#pragma once

#include <cstdint>

#include "dispatch/dispatch.hpp"
#include "ozgemm/b2b_types.hpp"

namespace ozgemm {
namespace dispatch {

// workspace: plan.workspace_bytes bytes. Grouped plans: table_host holds the group table
// (b2b::fill_group_table) in pinned host memory; it is copied into the workspace on ctx.stream.
ozgemmStatus_t run_b2b(const ExecContext& ctx, const b2b::Plan& plan, const b2b::Problem& problem,
                       const b2b::Arguments& args, void* workspace, const int64_t* table_host);

}  // namespace dispatch
}  // namespace ozgemm
