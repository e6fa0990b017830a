// SPDX-License-Identifier: MIT
// The driver's encoder of the tensor maps that the TMA (cp.async.bulk.tensor, compute capability
// 9.0) copies by, for the launchers of the labs that use it (11, steps 6d and 6e; 14, step 6).
// Host-only: cudaTypedefs.h is a C header (the driver API's types), no CUDA syntax.
#pragma once

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000, CUtensorMap

namespace cl {

/// cuTensorMapEncodeTiled, a driver API function, found through the runtime
/// (cudaGetDriverEntryPointByVersion) once per process, so that a lab needs no link to the driver
/// library. Throws CudaError where the runtime fails, std::runtime_error where the driver has no
/// such function (older than CUDA 12).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder();

}  // namespace cl
