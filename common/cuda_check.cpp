// SPDX-License-Identifier: MIT
// Error checking for CUDA runtime calls.
#include "cuda_check.hpp"

#include <fmt/format.h>

namespace cl {
namespace {

bool g_context_broken = false;

// Errors after which the context cannot be used again (CUDA runtime API, "sticky" errors).
bool is_sticky(cudaError_t code) {
    switch (code) {
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchFailure:
        case cudaErrorHardwareStackError:
        case cudaErrorIllegalInstruction:
        case cudaErrorMisalignedAddress:
        case cudaErrorInvalidAddressSpace:
        case cudaErrorInvalidPc:
        case cudaErrorAssert:
        case cudaErrorLaunchTimeout:
        case cudaErrorECCUncorrectable:
            return true;
        default:
            return false;
    }
}

[[noreturn]] void raise(cudaError_t code, std::string_view what, const char* file, int line) {
    const bool sticky = is_sticky(code);
    if (sticky) g_context_broken = true;
    throw CudaError(code,
                    fmt::format("{} failed: {} ({}) at {}:{}", what, cudaGetErrorString(code),
                                cudaGetErrorName(code), file, line),
                    sticky);
}

}  // namespace

void check_cuda(cudaError_t code, const char* expression, const char* file, int line) {
    if (code != cudaSuccess) raise(code, expression, file, line);
}

void check_launch(const char* file, int line) {
    const cudaError_t code = cudaGetLastError();
    if (code != cudaSuccess) raise(code, "kernel launch", file, line);
}

void check_sync(const char* file, int line) {
    const cudaError_t code = cudaDeviceSynchronize();
    if (code != cudaSuccess) raise(code, "kernel execution (cudaDeviceSynchronize)", file, line);
}

bool context_is_broken() noexcept { return g_context_broken; }

}  // namespace cl
