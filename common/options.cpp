// SPDX-License-Identifier: MIT
// Harness options.
#include "options.hpp"

#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string_view>

namespace cl {
namespace {

std::uint64_t parse_seed(std::string_view text) {
    std::size_t used = 0;
    const std::string copy(text);
    unsigned long long value = 0;
    try {
        value = std::stoull(copy, &used, 0);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != copy.size()) throw std::invalid_argument("bad seed '" + copy + "': want a whole number");
    return value;
}

std::optional<std::string_view> value_of(std::string_view argument, std::string_view name) {
    if (argument.substr(0, name.size()) != name) return std::nullopt;
    return argument.substr(name.size());
}

}  // namespace

bool step_selected(const std::string& id) {
    const std::string& only = run_options().only_step;
    return only.empty() || only == id;
}

RunOptions& run_options() {
    static RunOptions options;
    return options;
}

std::vector<char*> parse_run_options(int argc, char** argv) {
    RunOptions& options = run_options();
    if (const char* env = std::getenv("LAB_SEED"); env != nullptr && *env != '\0') {
        options.seed = parse_seed(env);
        options.seed_given = true;
    }
    if (const char* env = std::getenv("LAB_RESULTS"); env != nullptr) options.results_path = env;
    if (const char* env = std::getenv("LAB_STEP"); env != nullptr) options.only_step = env;
    if (const char* env = std::getenv("LAB_DUMP"); env != nullptr) options.dump_path = env;

    std::vector<char*> rest;
    for (int i = 0; i < argc; ++i) {
        const std::string_view argument = argv[i];
        if (i > 0) {
            if (auto seed = value_of(argument, "--seed=")) {
                options.seed = parse_seed(*seed);
                options.seed_given = true;
                continue;
            }
            if (auto path = value_of(argument, "--results=")) {
                options.results_path = *path;
                continue;
            }
            if (auto id = value_of(argument, "--step=")) {
                options.only_step = *id;
                continue;
            }
            if (auto path = value_of(argument, "--dump=")) {
                options.dump_path = *path;
                continue;
            }
            if (auto path = value_of(argument, "--trace=")) {
                options.trace_path = *path;
                continue;
            }
            if (argument == "--trace") {
                if (i + 1 >= argc) throw std::invalid_argument("--trace needs a file name: --trace FILE");
                options.trace_path = argv[++i];
                continue;
            }
            if (auto what = value_of(argument, "--expect=")) {
                if (*what != "not-implemented") {
                    throw std::invalid_argument("--expect takes only 'not-implemented'");
                }
                options.expect_not_implemented = true;
                continue;
            }
        }
        rest.push_back(argv[i]);
    }
    if (!options.seed_given) options.seed = std::random_device{}() % 1000000;
    return rest;
}

}  // namespace cl
