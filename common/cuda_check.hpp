// SPDX-License-Identifier: MIT
// Error checking for CUDA runtime calls: every failure becomes a C++ exception
// that names the call, the error and the place, so a harness can report it and go on.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace cl {

/// A failed CUDA runtime call. `code()` is the runtime's error; `sticky()` says
/// whether the CUDA context is unusable from now on (an illegal address, a trap...).
class CudaError : public std::runtime_error {
public:
    CudaError(cudaError_t code, const std::string& what, bool sticky)
        : std::runtime_error(what), code_(code), sticky_(sticky) {}
    cudaError_t code() const noexcept { return code_; }
    bool sticky() const noexcept { return sticky_; }

private:
    cudaError_t code_;
    bool sticky_;
};

/// Throws CudaError if `code` is not cudaSuccess. Use through CUDA_CHECK.
void check_cuda(cudaError_t code, const char* expression, const char* file, int line);

/// Checks that the last kernel launch was accepted (bad configuration, too many
/// threads...) without waiting for it. Launchers call it after every `<<<...>>>`.
void check_launch(const char* file, int line);

/// Waits for the device and throws if any queued work failed.
void check_sync(const char* file, int line);

/// True when the context has seen an error that every later call will repeat.
bool context_is_broken() noexcept;

}  // namespace cl

// A macro only because an expression's text and place can be captured no other way.
#define CUDA_CHECK(expr) ::cl::check_cuda((expr), #expr, __FILE__, __LINE__)
#define CUDA_CHECK_LAUNCH() ::cl::check_launch(__FILE__, __LINE__)
#define CUDA_CHECK_SYNC() ::cl::check_sync(__FILE__, __LINE__)
