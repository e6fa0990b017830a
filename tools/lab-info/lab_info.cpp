// SPDX-License-Identifier: MIT
// `./lab info`: know your machine. The GPU and the properties the course talks about (SMs, warps,
// shared memory, registers, L2, clocks, memory), the limits they imply, and the roofs the labs
// are measured against, measured now: the course's deviceQuery and bandwidthTest in one.
// Without a usable GPU it says why and exits 0 with what it could tell.
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "fma_roof.hpp"
#include "harness.hpp"
#include "pcie.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <exception>
#include <string>
#include <string_view>

namespace {

int attribute(cudaDeviceAttr what, int device) {
    int value = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&value, what, device));
    return value;
}

std::string version_text(int version) {  // 13000 -> "13.0"
    return version == 0 ? std::string("none") : fmt::format("{}.{}", version / 1000, version % 1000 / 10);
}

std::string bytes_text(double bytes) {
    if (bytes >= double(1ull << 30)) return fmt::format("{:.1f} GiB", bytes / double(1ull << 30));
    if (bytes >= double(1ull << 20)) return fmt::format("{:.1f} MiB", bytes / double(1ull << 20));
    return fmt::format("{:.0f} KiB", bytes / 1024.0);
}

void line(std::string_view name, std::string_view value, std::string_view note = {}) {
    if (note.empty()) {
        fmt::print("  {:<34} {}\n", name, value);
    } else {
        fmt::print("  {:<34} {:<16} {}\n", name, value, note);
    }
}

void print_versions() {
    int driver = 0;
    int runtime = 0;
    // Both succeed without a GPU; the driver version is 0 when no driver is installed.
    (void)cudaDriverGetVersion(&driver);
    (void)cudaRuntimeGetVersion(&runtime);
    fmt::print("CUDA runtime {} (this build), driver supports CUDA {}\n", version_text(runtime), version_text(driver));
}

void print_properties(int device) {
    const cl::DeviceInfo& info = cl::current_device();
    char bus_id[32] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
    fmt::print("\nGPU {}: {} (PCI {})\n", device, info.name, bus_id);

    fmt::print("\nThe chip\n");
    line("compute capability", fmt::format("{}.{}", info.compute_major, info.compute_minor),
         fmt::format("nvcc -arch=sm_{}{}; meson -Dgpu_arch={}{}", info.compute_major, info.compute_minor,
                     info.compute_major, info.compute_minor));
    line("streaming multiprocessors (SMs)", fmt::format("{}", info.sm_count));
    line("warp size", fmt::format("{} threads", attribute(cudaDevAttrWarpSize, device)));
    line("SM clock (maximum)", fmt::format("{:.0f} MHz", info.sm_clock_khz / 1e3));
    line("FP32 rate, theoretical", fmt::format("{:.0f} GFLOP/s", info.fp32_peak_gflops()),
         "SMs x 128 FP32 lanes x 2 (an FMA) x clock");
    const double tensor_peak = info.fp16_tensor_peak_gflops();
    line("FP16 tensor rate, theoretical",
         tensor_peak > 0 ? fmt::format("{:.0f} GFLOP/s", tensor_peak) : std::string("unknown"),
         "FP16 in, FP32 accumulate, dense: SMs x FLOP per clock per SM x clock");

    fmt::print("\nPer block and per SM\n");
    const int threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor, device);
    line("threads per block (maximum)", fmt::format("{}", attribute(cudaDevAttrMaxThreadsPerBlock, device)));
    line("threads per SM (maximum)", fmt::format("{}", threads_per_sm),
         fmt::format("{} warps", threads_per_sm / attribute(cudaDevAttrWarpSize, device)));
    line("blocks per SM (maximum)", fmt::format("{}", attribute(cudaDevAttrMaxBlocksPerMultiprocessor, device)));
    line("block dimensions (maximum)",
         fmt::format("{} x {} x {}", attribute(cudaDevAttrMaxBlockDimX, device),
                     attribute(cudaDevAttrMaxBlockDimY, device), attribute(cudaDevAttrMaxBlockDimZ, device)));
    line("grid dimensions (maximum)",
         fmt::format("{} x {} x {}", attribute(cudaDevAttrMaxGridDimX, device),
                     attribute(cudaDevAttrMaxGridDimY, device), attribute(cudaDevAttrMaxGridDimZ, device)));
    line("registers per SM", fmt::format("{}", attribute(cudaDevAttrMaxRegistersPerMultiprocessor, device)),
         "32-bit registers");
    line("registers per block (maximum)", fmt::format("{}", attribute(cudaDevAttrMaxRegistersPerBlock, device)));
    line("shared memory per block", bytes_text(attribute(cudaDevAttrMaxSharedMemoryPerBlock, device)),
         "without opting in");
    line("shared memory per block, opt-in", bytes_text(attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device)),
         "cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...)");
    line("shared memory per SM", bytes_text(attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, device)));
    line("constant memory", bytes_text(attribute(cudaDevAttrTotalConstantMemory, device)));

    fmt::print("\nMemory\n");
    line("global memory", bytes_text(static_cast<double>(info.global_bytes)));
    line("L2 cache", bytes_text(static_cast<double>(info.l2_bytes)),
         fmt::format("persisting at most {}", bytes_text(attribute(cudaDevAttrMaxPersistingL2CacheSize, device))));
    line("memory clock", fmt::format("{:.0f} MHz", info.memory_clock_khz / 1e3));
    line("memory bus", fmt::format("{} bits", info.memory_bus_bits));
    line("DRAM bandwidth, theoretical", fmt::format("{:.0f} GB/s", info.theoretical_gbps()),
         "2 transfers per clock x clock x bus width");
    line("copy engines", fmt::format("{}", attribute(cudaDevAttrAsyncEngineCount, device)),
         "copies that overlap kernels (lab 09)");
    line("managed memory, concurrent access",
         attribute(cudaDevAttrConcurrentManagedAccess, device) != 0 ? "yes" : "no",
         "page faults on the GPU, prefetch (lab 10)");
    line("ECC", attribute(cudaDevAttrEccEnabled, device) != 0 ? "on" : "off");
}

void print_roof(std::string_view name, const cl::Roof& roof) {
    const std::string ceiling = roof.ceiling > 0 ? fmt::format("{:.0f}% of the theoretical {:.0f} {}",
                                                               100.0 * roof.value / roof.ceiling, roof.ceiling,
                                                               roof.unit)
                                                 : std::string();
    line(name, fmt::format("{:.0f} {}", roof.value, roof.unit), ceiling);
}

void print_roofs() {
    fmt::print("\nRoofs, measured now (what the labs' tables compare with)\n");
    print_roof("device-to-device cudaMemcpy", cl::memcpy_roof());
    print_roof("read-only sweep", cl::read_roof());
    print_roof("FP32 FMA rate", cl::fp32_fma_roof());
    const cl::PcieRates pcie = cl::measure_pcie();
    print_roof("host to device, pinned memory", pcie.pinned_h2d);
    print_roof("device to host, pinned memory", pcie.pinned_d2h);
    print_roof("both directions at once, pinned", pcie.pinned_duplex);
    print_roof("host to device, pageable memory", pcie.pageable_h2d);
    print_roof("device to host, pageable memory", pcie.pageable_d2h);
    line("host link", pcie.link.description);
}

}  // namespace

int main() {
    try {
        print_versions();
        if (auto reason = cl::why_no_cuda_device()) {
            fmt::print("No GPU to describe: {}.\n", *reason);
            fmt::print("Everything builds here; run `./lab info` on a machine with an NVIDIA GPU and its driver.\n");
            return 0;
        }
        int count = 0;
        int device = 0;
        CUDA_CHECK(cudaGetDeviceCount(&count));
        CUDA_CHECK(cudaGetDevice(&device));
        if (count > 1) fmt::print("{} GPUs; the labs use GPU {} (set CUDA_VISIBLE_DEVICES to pick another)\n", count, device);
        print_properties(device);
        print_roofs();
        return 0;
    } catch (const std::exception& error) {
        fmt::print(stderr, "error: {}\n", error.what());
        return 1;
    }
}
