// SPDX-License-Identifier: MIT
// probe_bodies: the reference's register-blocked kernels of steps 7 and 8 at 1, 2, 4 and 8 bodies
// per thread, launched as the lab's launchers launch a shape (see probe_bodies.cpp). The reference
// kernels and the given launchers, in this translation unit (meson.build copies
// solutions/08-nbody/nbody.cu to reference_nbody.cuh).
#include "reference_nbody.cuh"

#include "probe_bodies.hpp"

namespace nbody::probe_bodies {
namespace {

template <auto kKernel, int kBodies>
void launch(Bodies bodies, Workspace workspace, float* accel) {
    launch_split(kKernel, bodies, workspace, accel, split_grid_filling(kKernel, bodies.count, blocked_shape(kBodies)));
}

template <auto kKernel, int kBodies>
LaunchShape shape(int count) {
    return split_shape(cl::kernel_resources(kKernel, kThreadsPerBlock),
                       split_grid_filling(kKernel, count, blocked_shape(kBodies)));
}

template <int kBodies>
Variant blocked() {
    return {"7", kBodies, kBodies == kReferenceBodies, DistanceFormula::direct,
            launch<register_blocked<kBodies>, kBodies>, shape<register_blocked<kBodies>, kBodies>};
}

template <int kBodies>
Variant rewritten() {
    return {"8", kBodies, kBodies == kReferenceBodies, DistanceFormula::rewritten,
            launch<rewritten_blocked<kBodies>, kBodies>, shape<rewritten_blocked<kBodies>, kBodies>};
}

}  // namespace

std::vector<Variant> variants() {
    return {blocked<1>(), blocked<2>(), blocked<4>(), blocked<8>(),
            rewritten<1>(), rewritten<2>(), rewritten<4>(), rewritten<8>()};
}

}  // namespace nbody::probe_bodies
