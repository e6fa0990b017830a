// SPDX-License-Identifier: MIT
// Lab 03-matmul-naive: MatrixView, a row-major matrix that kernels and host code both index as
// m(row, col) (given; read it, do not edit it). Step 4 uses it; test_matrix_view.cpp checks its
// host side without a GPU. The chapter's section "A matrix type for both sides" explains it.
#pragma once

// __host__ and __device__: nvcc knows them anyway; a host compiler (g++, for the unit test)
// gets them from here, defined as nothing.
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace matmul_naive {

/// A view of a rows x cols row-major matrix of T that lives in device memory, with an optional
/// host mirror (a copy of the same rows x cols in host memory). It owns nothing: the memory
/// belongs to whoever made the view (a cl::DeviceBuffer on the host side, a std::vector for
/// the mirror) and must outlive every use of the view, kernels still running included.
///
/// Pass it to a kernel by value: the launch copies these 24 bytes (two pointers, two ints) into
/// the kernel's parameters, never the elements they point to.
template <class T>
struct MatrixView {
    T* device = nullptr;  ///< the elements in device memory: what device code indexes
    T* host = nullptr;    ///< a host mirror of the same elements, or nullptr: what host code indexes
    int rows = 0;
    int cols = 0;

    /// Element (row, col): the same source, compiled once per side. nvcc's device pass, which
    /// defines __CUDA_ARCH__, sees only the first branch; its host pass (and g++) only the second.
    __host__ __device__ T& operator()(int row, int col) const {
#ifdef __CUDA_ARCH__
        // Device code: the inner loop of a kernel, so no check (each kernel checks its own row
        // and col once). `host` holds a host address, which a GPU thread must not dereference.
        return device[offset(row, col)];
#else
        // Host code: never a hot path, so checked. `device` holds a device address, which the CPU
        // must not dereference: reading through it is the classic mistake (a crash, or garbage).
        if (row < 0 || row >= rows || col < 0 || col >= cols) {
            throw std::out_of_range("MatrixView: element (" + std::to_string(row) + ", " + std::to_string(col) +
                                    ") is outside the " + std::to_string(rows) + " x " + std::to_string(cols) +
                                    " matrix");
        }
        if (host == nullptr) {
            throw std::logic_error("MatrixView: host code indexed a matrix that has no host mirror; its elements "
                                   "are in device memory: copy them to the host and set `host` first");
        }
        return host[offset(row, col)];
#endif
    }

    /// Where element (row, col) is, counted in elements from the first: row * cols + col, in
    /// std::size_t (row * cols overflows int once the matrix holds 2^31 elements).
    __host__ __device__ std::size_t offset(int row, int col) const {
        return static_cast<std::size_t>(row) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(col);
    }
};

// A kernel receives its arguments as bytes: nvcc copies the object's representation, and runs
// neither a copy constructor nor a destructor on the device. Keep the view a plain aggregate.
static_assert(std::is_trivially_copyable_v<MatrixView<float>> && std::is_trivially_destructible_v<MatrixView<float>>,
              "MatrixView goes to kernels by value, as bytes: keep it trivially copyable and trivially destructible "
              "(no destructor, no user-written copy constructor or assignment)");

}  // namespace matmul_naive
