// SPDX-License-Identifier: MIT
// The one family of buffers of the harnesses and the probes: RAII owners of device memory (between
// guard bands), of memory the host addresses (pageable, pinned, mapped or managed), and of host
// memory between guard bands, with the copies and the poisoning the harnesses need. Host-only:
// usable from g++-compiled harnesses.
#pragma once

#include "cuda_check.hpp"
#include "guard.hpp"
#include "parallel.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
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

/// Where a HostBuffer's memory comes from: memory the host addresses.
enum class HostMemory {
    pageable,  ///< new[]: ordinary host memory, copied through a staging buffer by the driver
    pinned,    ///< cudaMallocHost: page-locked, copied by the copy engines directly
    mapped,    ///< cudaHostAlloc(..., cudaHostAllocMapped): pinned and mapped into the GPU's address space
    managed,   ///< cudaMallocManaged: one pointer for the host and the GPU, pages migrating on demand
};

/// `count` elements of T in memory the host addresses, of one kind, freed when the buffer goes out of
/// scope.
template <class T>
class HostBuffer {
public:
    HostBuffer() = default;
    HostBuffer(std::size_t count, HostMemory memory) : memory_(memory), count_(count) {
        if (count_ == 0) return;
        switch (memory_) {
            case HostMemory::pageable: data_ = new T[count_](); break;  // value-initialized: every page mapped
            case HostMemory::pinned: CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), bytes())); break;
            case HostMemory::mapped:
                CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&data_), bytes(), cudaHostAllocMapped));
                break;
            case HostMemory::managed: CUDA_CHECK(cudaMallocManaged(reinterpret_cast<void**>(&data_), bytes())); break;
        }
    }
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;
    HostBuffer(HostBuffer&& other) noexcept { swap(other); }
    HostBuffer& operator=(HostBuffer&& other) noexcept {
        HostBuffer(std::move(other)).swap(*this);
        return *this;
    }
    ~HostBuffer() {
        if (data_ == nullptr) return;
        switch (memory_) {
            case HostMemory::pageable: delete[] data_; break;
            case HostMemory::pinned:
            case HostMemory::mapped: cudaFreeHost(data_); break;
            case HostMemory::managed: cudaFree(data_); break;
        }
    }

    T* data() noexcept { return data_; }
    const T* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return count_; }
    std::size_t bytes() const noexcept { return count_ * sizeof(T); }
    HostMemory memory() const noexcept { return memory_; }
    /// Page-locked (pinned or mapped): the copy engines read and write it directly.
    bool page_locked() const noexcept { return memory_ == HostMemory::pinned || memory_ == HostMemory::mapped; }
    std::span<T> span() noexcept { return {data_, count_}; }
    std::span<const T> span() const noexcept { return {data_, count_}; }
    T& operator[](std::size_t i) noexcept { return data_[i]; }
    const T& operator[](std::size_t i) const noexcept { return data_[i]; }
    /// Fills every byte with kPoisonByte on the host (which brings managed pages to the host).
    void poison() {
        if (count_ > 0) std::memset(data_, kPoisonByte, bytes());
    }
    void swap(HostBuffer& other) noexcept {
        std::swap(memory_, other.memory_);
        std::swap(data_, other.data_);
        std::swap(count_, other.count_);
    }

private:
    HostMemory memory_ = HostMemory::pageable;
    T* data_ = nullptr;
    std::size_t count_ = 0;
};

/// `count` elements of T in page-locked host memory (cudaMallocHost).
template <class T>
class PinnedBuffer : public HostBuffer<T> {
public:
    PinnedBuffer() = default;
    explicit PinnedBuffer(std::size_t count) : HostBuffer<T>(count, HostMemory::pinned) {}
};

/// `count` elements of T in host memory (pageable or pinned) between two guard bands of `guard`
/// elements each: a copy back that writes past either end lands in a band and is reported
/// (take_damage), instead of corrupting the heap. `name` ("out") is what the report calls it.
template <class T>
class GuardedHostBuffer {
public:
    GuardedHostBuffer(std::size_t count, std::size_t guard, HostMemory memory, std::string name)
        : count_(count), guard_(guard), name_(std::move(name)), memory_(count + 2 * guard, memory) {
        rearm_guards();
    }
    T* data() noexcept { return memory_.data() + guard_; }
    const T* data() const noexcept { return memory_.data() + guard_; }
    std::span<T> span() noexcept { return {data(), count_}; }
    std::span<const T> span() const noexcept { return {data(), count_}; }
    std::size_t size() const noexcept { return count_; }
    bool page_locked() const noexcept { return memory_.page_locked(); }

    /// Every element poisoned: by the CPU on `slicing`'s threads, or, for page-locked memory, by
    /// the copy engine from `poisoned` (device memory of at least size() elements, poisoned). A
    /// memset leaves the lines it wrote dirty in the CPU's caches, and a copy out over them right
    /// after ran 20 to 40% slower and unevenly on the H100 (docs/labs/09-streams.md, "An ideal that
    /// holds from run to run"); a copy leaves none.
    void poison(const T* poisoned = nullptr, Slicing slicing = {}) {
        T* values = data();
        if (poisoned != nullptr && page_locked()) {
            CUDA_CHECK(cudaMemcpy(values, poisoned, count_ * sizeof(T), cudaMemcpyDeviceToHost));
            return;
        }
        for_slices(count_, [&](std::size_t first, std::size_t last) {
            std::memset(values + first, kPoisonByte, (last - first) * sizeof(T));
        }, slicing);
    }

    /// What a write into the bands looks like ("wrote past the end of ..."), then re-armed.
    std::optional<std::string> take_damage() {
        const auto band = [&](const T* at) {
            return std::span<const unsigned char>(reinterpret_cast<const unsigned char*>(at), guard_ * sizeof(T));
        };
        auto damage = describe_guard_damage(name_, band(memory_.data()), band(data() + count_), sizeof(T), count_);
        if (damage) rearm_guards();
        return damage;
    }

private:
    void rearm_guards() {
        std::memset(memory_.data(), kGuardByte, guard_ * sizeof(T));
        std::memset(data() + count_, kGuardByte, guard_ * sizeof(T));
    }
    std::size_t count_;
    std::size_t guard_;
    std::string name_;
    HostBuffer<T> memory_;
};

}  // namespace cl
