// SPDX-License-Identifier: MIT
// The output dump (see output_dump.hpp).
#include "output_dump.hpp"

#include "options.hpp"
#include "random.hpp"
#include "results.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <stdexcept>
#include <string_view>

namespace cl {
namespace {

struct DumpState {
    std::string key;                          // the step being checked; empty: none
    std::map<std::string, std::size_t> next;  // comparisons recorded per key
    std::FILE* file = nullptr;
    std::string file_path;  // the path `file` was opened for
};

DumpState& state() {
    static DumpState instance;
    return instance;
}

// Full precision (the grader compares sums with the reference's): not results.cpp's six digits.
std::string json_exact_number(double value) { return std::isfinite(value) ? fmt::format("{:.17g}", value) : "null"; }

}  // namespace

bool output_dump_active() { return !state().key.empty() && !run_options().dump_path.empty(); }

namespace {

// The state, with the dump file open for the current --dump path (a new path starts a new dump).
DumpState& open_dump() {
    DumpState& dump = state();
    if (dump.file == nullptr || dump.file_path != run_options().dump_path) {
        if (dump.file != nullptr) std::fclose(dump.file);
        dump.file_path = run_options().dump_path;
        dump.file = std::fopen(dump.file_path.c_str(), "w");
        if (dump.file == nullptr) throw std::runtime_error("cannot write the output dump " + dump.file_path);
        dump.next.clear();
    }
    return dump;
}

}  // namespace

std::uint64_t next_output_sketch_seed() {
    DumpState& dump = open_dump();
    const std::size_t number = dump.next[dump.key];
    std::uint64_t hash = hash_text(kHashStart ^ run_options().seed, dump.key);
    hash = hash_text(hash, fmt::format("#{}", number));
    return hash;
}

void record_output_sketch(const OutputSketch& sketch) {
    DumpState& dump = open_dump();
    const std::size_t number = dump.next[dump.key]++;
    std::string blocks;
    for (const OutputBlock& block : sketch.blocks) {
        blocks += fmt::format("{}[{}, {}, {}, {}, {}]", blocks.empty() ? "" : ", ",
                              json_exact_number(block.signed_sums[0]), json_exact_number(block.signed_sums[1]),
                              json_exact_number(block.low), json_exact_number(block.high),
                              json_exact_number(block.allowed_squares));
    }
    const std::string line =
        fmt::format(R"({{"key": {}, "n": {}, "count": {}, "block": {}, "non_finite": {}, "blocks": [{}]}})"
                    "\n",
                    json_string(dump.key), number, sketch.count, sketch.block, sketch.non_finite, blocks);
    std::fputs(line.c_str(), dump.file);
    std::fflush(dump.file);
}

OutputDumpScope::OutputDumpScope(std::string key) : previous_(std::move(state().key)) {
    state().key = std::move(key);
}

OutputDumpScope::~OutputDumpScope() { state().key = std::move(previous_); }

}  // namespace cl
