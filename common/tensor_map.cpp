// SPDX-License-Identifier: MIT
#include "tensor_map.hpp"

#include "cuda_check.hpp"

#include <cuda_runtime.h>

#include <stdexcept>

namespace cl {

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
    static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
        void* function = nullptr;
        cudaDriverEntryPointQueryResult found{};
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault,
                                                    &found));
        if (found != cudaDriverEntryPointSuccess || function == nullptr) {
            throw std::runtime_error("the CUDA driver has no cuTensorMapEncodeTiled (the TMA needs CUDA 12 or later)");
        }
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
    }();
    return encode;
}

}  // namespace cl
