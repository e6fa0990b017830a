// SPDX-License-Identifier: MIT
// The roofs of the matrix-multiplication labs: cuBLAS SGEMM in plain FP32, and cuBLAS's tensor-core
// GEMM with FP16 inputs and FP32 accumulation, both on row-major data.
#pragma once

// cuda_fp16.h's half type, by name: the FP32 callers need not parse that header.
struct __half;

namespace cl {

/// Row-major c (m x n) = a (m x k) * b (k x n), all in device memory, through cuBLAS with
/// CUBLAS_DEFAULT_MATH (no TF32 tensor-core shortcut: the same arithmetic as the labs' kernels).
/// One handle per process, created on first use. Throws std::runtime_error on a cuBLAS error.
void cublas_sgemm_row_major(const float* a, const float* b, float* c, int m, int n, int k);

/// Row-major c (m x n, float) = a (m x k, FP16) * b (k x n, FP16), all in device memory, through
/// cublasGemmEx with FP16 inputs, FP32 output and CUBLAS_COMPUTE_32F (products and sums in FP32:
/// the tensor cores' FP16-in/FP32-accumulate mode). The same handle as cublas_sgemm_row_major.
/// Throws std::runtime_error on a cuBLAS error.
void cublas_hgemm_fp32_accumulate_row_major(const __half* a, const __half* b, float* c, int m, int n, int k);

}  // namespace cl
