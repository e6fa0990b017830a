// SPDX-License-Identifier: MIT
// RAII owners of device memory and pinned host memory, with the copies and the
// poisoning the harnesses need. Host-only: usable from g++-compiled harnesses.
#pragma once

#include "cuda_check.hpp"
#include "guard.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace cl {

/// Every byte 0xFF: NaN for float and double, -1 for signed integers, the largest
/// value for unsigned ones. A kernel that never writes an element leaves this pattern.
inline constexpr unsigned char kPoisonByte = 0xFF;

/// `count` elements of T in device memory, freed when the buffer goes out of scope. The data
/// sits between two guard bands (guard.hpp): the harness fails a step that writes into them.
/// `name` ("c") is what those messages call the buffer.
template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count, std::string name = {}) : count_(count) {
        if (count_ > 0) data_ = static_cast<T*>(guarded_malloc(count_, sizeof(T), std::move(name)));
    }
    /// Allocates and uploads `host`.
    explicit DeviceBuffer(std::span<const T> host, std::string name = {}) : DeviceBuffer(host.size(), std::move(name)) {
        upload(host);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        DeviceBuffer(std::move(other)).swap(*this);
        return *this;
    }
    ~DeviceBuffer() { guarded_free(data_); }  // checks the bands; never throws

    T* data() noexcept { return data_; }
    const T* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return count_; }
    std::size_t bytes() const noexcept { return count_ * sizeof(T); }

    void upload(std::span<const T> host) {
        if (host.size() != count_) throw std::invalid_argument("DeviceBuffer::upload: size mismatch");
        if (count_ > 0) CUDA_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
    }
    void download(std::span<T> host) const {
        if (host.size() != count_) throw std::invalid_argument("DeviceBuffer::download: size mismatch");
        if (count_ > 0) CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    }
    std::vector<T> to_host() const {
        std::vector<T> host(count_);
        download(host);
        return host;
    }
    /// Fills every byte with kPoisonByte so that unwritten elements are caught.
    void poison() {
        if (count_ > 0) CUDA_CHECK(cudaMemset(data_, kPoisonByte, bytes()));
    }
    void swap(DeviceBuffer& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(count_, other.count_);
    }

private:
    T* data_ = nullptr;
    std::size_t count_ = 0;
};

/// `count` elements of T in page-locked host memory (cudaMallocHost).
template <class T>
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    explicit PinnedBuffer(std::size_t count) : count_(count) {
        if (count_ > 0) CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), count_ * sizeof(T)));
    }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    PinnedBuffer(PinnedBuffer&& other) noexcept { swap(other); }
    PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
        PinnedBuffer(std::move(other)).swap(*this);
        return *this;
    }
    ~PinnedBuffer() {
        if (data_ != nullptr) cudaFreeHost(data_);
    }

    T* data() noexcept { return data_; }
    const T* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return count_; }
    std::size_t bytes() const noexcept { return count_ * sizeof(T); }
    std::span<T> span() noexcept { return {data_, count_}; }
    T& operator[](std::size_t i) noexcept { return data_[i]; }
    void swap(PinnedBuffer& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(count_, other.count_);
    }

private:
    T* data_ = nullptr;
    std::size_t count_ = 0;
};

}  // namespace cl
