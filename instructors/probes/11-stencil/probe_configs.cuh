// SPDX-License-Identifier: MIT
// What lab 11's stencil probes (probe_marching.cu, probe_ring.cu) share when they make their
// configurations: a kernel's local memory, and the lab's steps by id as rows. Include it after
// reference_stencil.cuh.
#pragma once

#include "cuda_check.hpp"
#include "stencil.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace stencil::probe_configs {

/// Local memory per thread (spills) of `kernel`, from the compiler.
template <class Kernel>
int local_bytes_of(Kernel kernel) {
    cudaFuncAttributes attributes{};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    return static_cast<int>(attributes.localSizeBytes);
}

/// The lab's step `id` (kSteps); `probe` names the probe in the error where the lab has none.
inline const Step& lab_step_named(std::string_view id, std::string_view probe) {
    for (const Step& step : kSteps) {
        if (id == step.id) return step;
    }
    throw std::logic_error(std::string(probe) + ": the lab has no step " + std::string(id));
}

/// A probe's row (its Config) for `step` as the lab launches it: its name and radius, and the
/// resources of its kernel; the probe adds how it launches the step.
template <class Config>
Config lab_step_row(const Step& step) {
    Config c;
    c.kernel = std::string("lab step ") + step.id + ": " + step.name;
    c.radius = step.radius;
    c.resources = step.resources;
    return c;
}

}  // namespace stencil::probe_configs
