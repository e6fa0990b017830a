// SPDX-License-Identifier: MIT
// Harness options.
#include "options.hpp"

#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string_view>

#include <unistd.h>  // environ

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
    if (const char* env = std::getenv("LAB_GUARD_BANDS"); env != nullptr) {
        options.front_guard_bands_only = std::string_view(env) == "front" || std::string_view(env) == "0";
    }

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
            if (auto bands = value_of(argument, "--guard-bands=")) {
                if (*bands != "1" && *bands != "2") {
                    throw std::invalid_argument("--guard-bands takes 1 (a front band only) or 2 (front and back)");
                }
                options.front_guard_bands_only = *bands == "1";
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

bool is_harness_variable(const char* variable) { return std::strncmp(variable, "LAB_", 4) == 0; }

bool is_harness_option(const char* argument) {
    for (const char* name : {"--seed=", "--results=", "--step=", "--dump=", "--trace=", "--expect=", "--guard-bands="}) {
        if (std::strncmp(argument, name, std::strlen(name)) == 0) return true;
    }
    return false;
}

void forget_given_settings(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (argv[i] != nullptr && is_harness_option(argv[i])) std::memset(argv[i], 0, std::strlen(argv[i]));
    }
    char** kept = environ;
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
        if (is_harness_variable(*entry)) {
            std::memset(*entry, 0, std::strlen(*entry));
            continue;
        }
        *kept++ = *entry;
    }
    if (kept != nullptr) *kept = nullptr;
}

}  // namespace cl
