// SPDX-License-Identifier: MIT
// cuBLAS SGEMM on row-major data, with status checks.
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

}  // namespace

void cublas_sgemm_row_major(const float* a, const float* b, float* c, int m, int n, int k) {
    static const CublasHandle handle;  // creating one costs milliseconds: once per process
    const float alpha = 1.0F;
    const float beta = 0.0F;
    // cuBLAS is column-major. Read column-major, row-major a, b and c are their transposes,
    // and c^T = b^T a^T: pass b first, then a, with m and n swapped.
    check_cublas(cublasSgemm(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, n, a, k, &beta, c, n),
                 "cublasSgemm");
}

}  // namespace cl
