// SPDX-License-Identifier: MIT
// cuBLAS SGEMM and the FP16-in/FP32-accumulate GEMM on row-major data, with status checks.
#include "cublas_sgemm.hpp"

#include <cublas_v2.h>
#include <fmt/format.h>

#include <stdexcept>

namespace cl {
namespace {

void check_cublas(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS) {
        throw std::runtime_error(fmt::format("{} failed: {}", call, cublasGetStatusString(status)));
    }
}

class CublasHandle {
public:
    CublasHandle() {
        check_cublas(cublasCreate(&handle_), "cublasCreate");
        check_cublas(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    }
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;
    ~CublasHandle() { cublasDestroy(handle_); }
    cublasHandle_t get() const noexcept { return handle_; }

private:
    cublasHandle_t handle_{};
};

// The one handle of the process: creating one costs milliseconds.
const CublasHandle& shared_handle() {
    static const CublasHandle handle;
    return handle;
}

}  // namespace

void cublas_sgemm_row_major(const float* a, const float* b, float* c, int m, int n, int k) {
    const CublasHandle& handle = shared_handle();
    const float alpha = 1.0F;
    const float beta = 0.0F;
    // cuBLAS is column-major. Read column-major, row-major a, b and c are their transposes,
    // and c^T = b^T a^T: pass b first, then a, with m and n swapped.
    check_cublas(cublasSgemm(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, n, a, k, &beta, c, n),
                 "cublasSgemm");
}

void cublas_hgemm_fp32_accumulate_row_major(const __half* a, const __half* b, float* c, int m, int n, int k) {
    const CublasHandle& handle = shared_handle();
    const float alpha = 1.0F;  // CUBLAS_COMPUTE_32F: alpha and beta are floats
    const float beta = 0.0F;
    // The same transpose trick as above: c^T = b^T a^T in column-major order.
    check_cublas(cublasGemmEx(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, CUDA_R_16F, n, a, CUDA_R_16F,
                              k, &beta, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx (FP16 in, FP32 accumulate)");
}

}  // namespace cl
