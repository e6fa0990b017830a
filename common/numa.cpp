// SPDX-License-Identifier: MIT
// The GPU's NUMA node from sysfs, and the process bound to that node's CPUs.
#include "numa.hpp"

#include "cuda_check.hpp"
#include "pcie.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

namespace cl {
namespace {

std::optional<std::string> read_text(const std::string& path) {
    std::ifstream file(path);
    if (!file) return std::nullopt;
    return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

std::optional<int> parse_int(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// A CPU set of any size (cpu_set_t holds 1024 CPUs; the CPU_*_S macros take a size).
class CpuSet {
public:
    explicit CpuSet(int cpus) : cpus_(std::max(cpus, 1)), set_(CPU_ALLOC(cpus_), &free_set) {
        CPU_ZERO_S(bytes(), set_.get());
    }
    std::size_t bytes() const { return CPU_ALLOC_SIZE(cpus_); }
    cpu_set_t* get() const { return set_.get(); }
    int capacity() const { return cpus_; }
    bool has(int cpu) const { return cpu >= 0 && cpu < cpus_ && CPU_ISSET_S(static_cast<std::size_t>(cpu), bytes(), get()); }
    void add(int cpu) {
        if (cpu >= 0 && cpu < cpus_) CPU_SET_S(static_cast<std::size_t>(cpu), bytes(), get());
    }

private:
    static void free_set(cpu_set_t* set) { CPU_FREE(set); }
    int cpus_;
    std::unique_ptr<cpu_set_t, void (*)(cpu_set_t*)> set_;
};

// The CPUs this process may run on now; none if the kernel will not say.
std::optional<std::vector<int>> allowed_cpus(int capacity) {
    CpuSet set(capacity);
    if (sched_getaffinity(0, set.bytes(), set.get()) != 0) return std::nullopt;
    std::vector<int> cpus;
    for (int cpu = 0; cpu < set.capacity(); ++cpu) {
        if (set.has(cpu)) cpus.push_back(cpu);
    }
    return cpus;
}

// Binds every thread of the process (CUDA's own included) to `cpus`; "" or why it could not.
std::string bind_threads(const std::vector<int>& cpus, int capacity) {
    CpuSet set(capacity);
    for (const int cpu : cpus) set.add(cpu);
    // The calling thread first: threads it creates later inherit its affinity.
    if (sched_setaffinity(0, set.bytes(), set.get()) != 0) {
        return fmt::format("sched_setaffinity failed ({})", std::strerror(errno));
    }
    // Then the threads that exist already (the CUDA driver's among them), from /proc/self/task.
    std::error_code error;
    std::filesystem::directory_iterator task(std::filesystem::path("/proc/self/task"), error);
    for (; !error && task != std::filesystem::directory_iterator(); task.increment(error)) {
        if (const auto tid = parse_int(task->path().filename().string())) {
            (void)sched_setaffinity(*tid, set.bytes(), set.get());  // a thread may have ended meanwhile
        }
    }
    return {};
}

NumaPlacement place() {
    NumaPlacement placement;
    const std::string bus_id = pci_bus_id();
    placement.node = gpu_numa_node();
    const auto online = read_text("/sys/devices/system/node/online");
    const auto nodes = online ? parse_cpu_list(*online) : std::nullopt;  // the same list syntax
    placement.nodes = nodes ? static_cast<int>(nodes->size()) : 0;
    if (placement.nodes == 1) {
        placement.description = fmt::format(
            "GPU {}, one NUMA node (node {}): all host memory is equally near it, nothing to bind", bus_id,
            nodes->front());
        return placement;
    }
    const std::string where = placement.node >= 0 ? fmt::format("GPU {} on NUMA node {}", bus_id, placement.node)
                                                  : fmt::format("GPU {}, NUMA node not named by the system", bus_id);
    const std::string of_nodes = placement.nodes > 0 ? fmt::format(" of {}", placement.nodes) : std::string();
    const auto unbound = [&](std::string_view why) {
        placement.description = fmt::format("{}{}: process not bound ({})", where, of_nodes, why);
        return placement;
    };
    if (placement.node < 0) return unbound("neither sysfs nor the driver names it");
    const auto node_text = read_text(fmt::format("/sys/devices/system/node/node{}/cpulist", placement.node));
    const auto node_cpus = node_text ? parse_cpu_list(*node_text) : std::nullopt;
    if (!node_cpus || node_cpus->empty()) return unbound(fmt::format("no CPU list for node {}", placement.node));
    const int capacity = std::max(CPU_SETSIZE, node_cpus->back() + 1);
    const auto allowed = allowed_cpus(capacity);
    if (!allowed) return unbound("sched_getaffinity failed");
    std::vector<int> cpus;
    std::set_intersection(node_cpus->begin(), node_cpus->end(), allowed->begin(), allowed->end(),
                          std::back_inserter(cpus));
    if (cpus.empty()) {
        return unbound(fmt::format("the process may not run on node {}'s CPUs {}", placement.node,
                                   format_cpu_list(*node_cpus)));
    }
    if (const std::string failure = bind_threads(cpus, capacity); !failure.empty()) return unbound(failure);
    placement.bound = true;
    placement.cpus = format_cpu_list(cpus);
    placement.description =
        fmt::format("{}{}: process bound to CPUs {}, so its host memory comes from node {}", where, of_nodes,
                    placement.cpus, placement.node);
    return placement;
}

}  // namespace

std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    std::vector<int> cpus;
    while (!text.empty()) {
        const std::size_t comma = text.find(',');
        const std::string_view item = text.substr(0, comma);
        const std::size_t dash = item.find('-');
        const auto first = parse_int(item.substr(0, dash));
        const auto last = dash == std::string_view::npos ? first : parse_int(item.substr(dash + 1));
        if (!first || !last || *first < 0 || *last < *first) return std::nullopt;
        for (int cpu = *first; cpu <= *last; ++cpu) cpus.push_back(cpu);
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
        if (text.empty()) return std::nullopt;  // a trailing comma
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
    std::string text;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!text.empty()) text += ',';
        text += j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
        i = j + 1;
    }
    return text;
}

int gpu_numa_node() {
    if (const auto text = read_text("/sys/bus/pci/devices/" + pci_bus_id() + "/numa_node")) {
        if (const auto node = parse_int(*text); node && *node >= 0) return *node;
    }
#if CUDART_VERSION >= 13000
    int device = 0;
    int node = -1;
    CUDA_CHECK(cudaGetDevice(&device));
    if (cudaDeviceGetAttribute(&node, cudaDevAttrHostNumaId, device) != cudaSuccess) {
        (void)cudaGetLastError();
        node = -1;
    }
    return node;
#else
    return -1;
#endif
}

const NumaPlacement& bind_to_gpu_numa_node() {
    static const NumaPlacement placement = place();
    return placement;
}

}  // namespace cl
