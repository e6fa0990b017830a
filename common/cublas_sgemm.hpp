// SPDX-License-Identifier: MIT
// The roof of the matrix-multiplication labs: cuBLAS SGEMM in plain FP32, on row-major data.
#pragma once

namespace cl {

/// Row-major c (m x n) = a (m x k) * b (k x n), all in device memory, through cuBLAS with
/// CUBLAS_DEFAULT_MATH (no TF32 tensor-core shortcut: the same arithmetic as the labs' kernels).
/// One handle per process, created on first use. Throws std::runtime_error on a cuBLAS error.
void cublas_sgemm_row_major(const float* a, const float* b, float* c, int m, int n, int k);

}  // namespace cl
