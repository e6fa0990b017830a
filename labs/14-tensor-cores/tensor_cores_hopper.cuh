// SPDX-License-Identifier: MIT
// Lab 14, step 6: the tile shapes and the Hopper PTX the step uses, as small device functions
// (given; shared by the starter, the solution and the launchers). tensor_cores_ptx.cuh includes it
// inside namespace tensor_cores. PTX ISA sections: "Asynchronous warpgroup level matrix multiply-
// accumulate instructions" (wgmma, its shared-memory matrix descriptor and the accumulator layout
// quoted below), "cp.async.bulk.tensor", "mbarrier" and "setmaxnreg".
//
// wgmma and setmaxnreg exist only in sm_90a code (the "a" is for architecture-specific features: the
// code runs on compute capability 9.0 alone). A build for plain sm_90 or another architecture
// compiles these wrappers to a trap, and the harness reports step 6 as skipped there, with the
// reason (configure with -Dgpu_arch=90a on a Hopper GPU).
#pragma once
// (tensor_cores.cu includes <cuda.h> for CUtensorMap, and <cstdint>, before its namespace.)

// ---------------------------------------------------------------------------------------
// Step 6's shapes. A persistent grid: one block per SM, each block walking tiles of c of
// kWgBlockM x kWgBlockN (grouped_tile<kWgBlockM, kWgBlockN> numbers them). A block is 3 warpgroups
// of 128 threads: warpgroup 0 is the producer (one of its threads issues the TMA copies),
// warpgroups 1 and 2 are the consumers, each computing 64 rows x 256 columns of the tile with
// wgmma m64n256k16 from a ring of kWgStages slices of kWgBlockK values of k in shared memory.
inline constexpr int kWgBlockM = 128;
inline constexpr int kWgBlockN = 256;
inline constexpr int kWgBlockK = 64;
inline constexpr int kWgStages = 4;
inline constexpr int kWarpgroupThreads = 128;
inline constexpr int kWgConsumers = 2;
inline constexpr int kWgThreads = (1 + kWgConsumers) * kWarpgroupThreads;
inline constexpr int kWgmmaM = 64;  // one wgmma: 64 x 256 x 16
inline constexpr int kWgmmaN = 256;
inline constexpr int kWgmmaK = 16;
inline constexpr int kWgmmaAccumulators = kWgmmaM * kWgmmaN / kWarpgroupThreads;  // 128 floats per thread
static_assert(kWgConsumers * kWgmmaM == kWgBlockM && kWgmmaN == kWgBlockN,
              "each consumer warpgroup computes kWgmmaM whole rows of the tile with one wgmma per 16 of k");
static_assert(kPadMN % kWgBlockM == 0 && kPadMN % kWgBlockN == 0 && kPadK % kWgBlockK == 0,
              "step 6's tiles and slices must tile the padded sizes: make kPadMN and kPadK multiples of them");

// The shared-memory ring. The TMA copies with a 128-byte swizzle, so every row of a box is 128
// bytes (64 halves) and the tiles start on 1024-byte boundaries (8 rows: one swizzle pattern).
//   a slice: kWgBlockM rows of a (64 values of k each, 128 bytes): one box of 64 x 128;
//   b slice: kWgBlockK rows of b cut into kWgBlockN / 64 boxes of 64 rows x 64 columns, box j
//            holding columns 64 j ... 64 j + 63 (8 KiB each, one after the other).
inline constexpr int kSwizzleBytes = 128;
inline constexpr int kSwizzleHalves = kSwizzleBytes / 2;
inline constexpr int kWgABytes = kWgBlockM * kWgBlockK * 2;
inline constexpr int kWgBBoxBytes = kWgBlockK * kSwizzleHalves * 2;
inline constexpr int kWgBBoxes = kWgBlockN / kSwizzleHalves;
inline constexpr int kWgBBytes = kWgBBoxes * kWgBBoxBytes;
inline constexpr int kWgStageBytes = kWgABytes + kWgBBytes;
static_assert(kWgBlockK * 2 == kSwizzleBytes, "a row of the a slice must be exactly one 128-byte swizzle row");
static_assert(kWgABytes % 1024 == 0 && kWgBBoxBytes % 1024 == 0,
              "every box must start on a 1024-byte boundary, where the 128-byte swizzle pattern starts");
// The ring, kWgStages full and kWgStages empty mbarriers after it, and 1024 bytes to align the
// start of the dynamic shared memory (the launcher opts in above 48 KiB).
inline constexpr std::size_t kWgSharedBytes =
    static_cast<std::size_t>(kWgStages) * kWgStageBytes + 2 * kWgStages * sizeof(std::uint64_t) + 1024;
static_assert(kWgSharedBytes <= 227 * 1024, "the ring must fit in the 227 KiB a block may have on Hopper");

// Registers per thread after setmaxnreg: the producer warpgroup gives up what it does not need
// (it holds a few indices), the consumers take it (128 accumulators each, plus addresses). The
// kernel starts with 65536 / 384 = 168 (rounded down to a multiple of 8) for every thread.
inline constexpr int kProducerRegisters = 40;
inline constexpr int kConsumerRegisters = 232;
static_assert(kWarpgroupThreads * (kProducerRegisters + kWgConsumers * kConsumerRegisters) <= 65536,
              "the warpgroups' register budgets must fit in the SM's 65536 registers");

// ---------------------------------------------------------------------------------------
// PTX for sm_90a. The wrappers compile to a trap elsewhere.

// mbarrier: a 64-bit object in shared memory that counts arrivals (and, for the TMA, bytes) and
// completes a phase when both reach what the phase expects; try_wait.parity asks whether the phase
// with the given parity (0, 1, 0, 1 ...) has completed.
__device__ __forceinline__ void mbarrier_init(std::uint64_t* barrier, unsigned arrivals) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(arrivals) : "memory");
#else
    (void)barrier;
    (void)arrivals;
    __trap();
#endif
}

// Makes the initialised barriers visible to the TMA (the async proxy) and to the other threads
// (with the __syncthreads() that follows).
__device__ __forceinline__ void mbarrier_init_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

// One arrival, and `bytes` more bytes that the phase must see arrive (the TMA's copies count them
// down as they land).
__device__ __forceinline__ void mbarrier_arrive_expect_bytes(std::uint64_t* barrier, unsigned bytes) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(barrier)),
                 "r"(bytes)
                 : "memory");
#else
    (void)barrier;
    (void)bytes;
    __trap();
#endif
}

// One arrival.
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* barrier) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(barrier)) : "memory");
#else
    (void)barrier;
    __trap();
#endif
}

// Waits until the phase of parity `parity` has completed. A fresh barrier is in phase 0: waiting
// for parity 1 (the phase "before" it) returns at once.
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* barrier, unsigned parity) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    unsigned done = 0;
    do {
        asm volatile(
            "{\n"
            ".reg .pred complete;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
            "selp.u32 %0, 1, 0, complete;\n"
            "}\n"
            : "=r"(done)
            : "r"(shared_address(barrier)), "r"(parity)
            : "memory");
    } while (done == 0);
#else
    (void)barrier;
    (void)parity;
    __trap();
#endif
}

// The TMA: copies the box of the 2-D tensor `map` whose first element is at (column, row)
// (innermost coordinate first) to shared memory at `destination`, laid out as the map says
// (here: swizzled by 128 bytes), and counts its bytes on `barrier`. One thread issues it.
__device__ __forceinline__ void tma_load_2d(void* destination, const CUtensorMap* map, int column, int row,
                                            std::uint64_t* barrier) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
        "[%4];\n" ::"r"(shared_address(destination)),
        "l"(reinterpret_cast<std::uint64_t>(map)), "r"(column), "r"(row), "r"(shared_address(barrier))
        : "memory");
#else
    (void)destination;
    (void)map;
    (void)column;
    (void)row;
    (void)barrier;
    __trap();
#endif
}

// setmaxnreg: the warpgroup's registers per thread from here on (a multiple of 8 in [24, 256]);
// every thread of the warpgroup executes it. It takes effect only in a kernel whose register count
// is fixed at entry (__launch_bounds__(threads, 1)).
template <int kRegisters>
__device__ __forceinline__ void warpgroup_release_registers() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
#endif
}
template <int kRegisters>
__device__ __forceinline__ void warpgroup_claim_registers() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
#endif
}

// The shared-memory matrix descriptor of a wgmma operand (64 bits): the start address, the
// "leading" and "stride" byte offsets (all three in units of 16 bytes) and the swizzle mode
// (1 in bits 62-63: 128 bytes). For the 128-byte swizzle, with 16-bit values:
//   K-major (a: k contiguous, rows of 64 values of k): 8 rows of 128 bytes form one swizzle
//     pattern of 1024 bytes; stride offset = the distance between 8-row groups (1024 bytes);
//     the leading offset is unused (1). The k-th 16 of k starts 32 k bytes into the rows.
//   MN-major (b: n contiguous, rows of 64 values of n per k): 8 rows (8 values of k) of 128
//     bytes form one pattern; stride offset = the distance between 8-k groups (1024 bytes),
//     leading offset = the distance between groups of 64 columns (the 8 KiB boxes). The k-th 16
//     of k starts 16 rows (2048 bytes) further.
// The tile must start on a 1024-byte boundary (the descriptor's base offset, bits 49-51, is 0).
__device__ __forceinline__ std::uint64_t matrix_descriptor(const void* start, unsigned leading_bytes,
                                                           unsigned stride_bytes) {
    constexpr std::uint64_t kSwizzle128 = std::uint64_t{1} << 62;
    return ((shared_address(start) & 0x3FFFFU) >> 4) | static_cast<std::uint64_t>(leading_bytes >> 4) << 16 |
           static_cast<std::uint64_t>(stride_bytes >> 4) << 32 | kSwizzle128;
}

// wgmma ordering. fence: the warpgroup's earlier register accesses to the accumulators are done
// before the next wgmma reads them. commit: closes a group of the wgmma issued since the last
// commit. wait<N>: until at most N of this warpgroup's groups are in flight (their reads of
// shared memory and writes of the accumulators are then complete).
__device__ __forceinline__ void wgmma_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
#endif
}

// wgmma.mma_async m64n256k16, FP16 in, FP32 accumulate: d (64 x 256) = a (64 x 16) * b (16 x 256)
// + (accumulate ? d : 0), a K-major and b MN-major (the "transposed" b, imm-trans-b = 1), both read
// from shared memory through their descriptors by the tensor cores. Issued by the 128 threads of a
// warpgroup together; it returns before the product is done (wgmma_commit / wgmma_wait).
// The accumulator layout: thread t of the warpgroup, warp w = t / 32, lane l = t % 32,
// g = l / 4, q = l % 4: d[4 j + 2 h + e] = row 16 w + 8 h + g, column 8 j + 2 q + e
// (j = 0 ... 31, h, e = 0, 1): each n8 column block j as in mma.m16n8's d, the warps 16 rows apart.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[kWgmmaAccumulators], std::uint64_t a_descriptor,
                                                 std::uint64_t b_descriptor, int accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile(
        "{\n"
        ".reg .pred keep;\n"
        "setp.ne.b32 keep, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, "
        "%8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, "
        "%40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, "
        "%56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, "
        "%72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, "
        "%88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, "
        "%104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, "
        "%120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, keep, 1, 1, 0, 1;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]),
          "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
          "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
          "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
          "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
          "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]),
          "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
          "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]),
          "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]),
          "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
          "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]),
          "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]),
          "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]),
          "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
          "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]),
          "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(a_descriptor), "l"(b_descriptor), "r"(accumulate));
#else
    (void)d;
    (void)a_descriptor;
    (void)b_descriptor;
    (void)accumulate;
    __trap();
#endif
}
