// SPDX-License-Identifier: MIT
// Results registry and its JSON form (schema "cuda-labs-results/1", see docs/grading.md).
#include "results.hpp"

#include "options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace cl {
namespace {

std::string json_number(double value) {
    if (!std::isfinite(value)) return "null";
    return fmt::format("{:.6g}", value);
}

std::string json_verdict(const Verdict& verdict) {
    return fmt::format(R"({{"status": {}, "message": {}}})", json_string(to_string(verdict.status)),
                       json_string(verdict.message));
}

std::string json_perf(const PerfRecord& perf) {
    return fmt::format(
        R"({{"status": {}, "message": {}, "time_ms": {}, "throughput": {}, "unit": {}, "percent_of_roof": {}, "variant": {}}})",
        json_string(to_string(perf.verdict.status)), json_string(perf.verdict.message), json_number(perf.ms),
        json_number(perf.throughput), json_string(perf.unit), json_number(perf.percent_of_roof),
        json_string(perf.variant));
}

// A number as printed from it later (tables): the shortest form that reads back the same double.
std::string json_exact(double value) {
    if (!std::isfinite(value)) return "null";
    return fmt::format("{}", value);
}

std::string json_strings(const std::vector<std::string>& texts) {
    std::string out;
    for (const auto& text : texts) out += fmt::format("{}{}", out.empty() ? "" : ", ", json_string(text));
    return "[" + out + "]";
}

std::string json_table(const TableRecord& table) {
    std::string rows;
    for (const auto& row : table.rows) {
        rows += fmt::format(
            R"({}{{"id": {}, "name": {}, "design": {}, "status": {}, "time_ms": {}, "throughput": {}, "extras": {}}})",
            rows.empty() ? "" : ", ", json_string(row.step.id), json_string(row.step.name),
            json_string(row.step.design), json_string(to_string(row.verdict.status)), json_exact(row.ms),
            json_exact(row.throughput), json_strings(row.extras));
    }
    return fmt::format(
        R"({{"title": {}, "problem": {}, "roof": {{"name": {}, "value": {}, "unit": {}, "ceiling": {}}}, "unit": {}, "extra_columns": {}, "rows": [{}]}})",
        json_string(table.title), json_string(table.problem), json_string(table.roof.name), json_exact(table.roof.value),
        json_string(table.roof.unit), json_exact(table.roof.ceiling), json_string(table.unit),
        json_strings(table.extra_columns), rows);
}

}  // namespace

std::string describe(const Roof& roof) { return fmt::format("{} {:.1f} {}", roof.name, roof.value, roof.unit); }

std::string_view to_string(Status status) {
    switch (status) {
        case Status::passed: return "passed";
        case Status::not_implemented: return "not_implemented";
        case Status::wrong: return "wrong";
        case Status::error: return "error";
        case Status::skipped: return "skipped";
        case Status::not_selected: return "not_selected";
    }
    return "unknown";
}

std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

std::string design_words(const char* text) {
    std::string words;
    if (text == nullptr) return words;
    // Bounded: the student's array is read no further than the characters kept, plus its end.
    for (std::size_t i = 0; i < 4 * kDesignLength && text[i] != '\0' && words.size() < kDesignLength; ++i) {
        const char c = text[i];
        if (c >= 0x20 && c < 0x7f && !(c == ' ' && (words.empty() || words.back() == ' '))) words += c;
    }
    while (!words.empty() && words.back() == ' ') words.pop_back();
    return words;
}

StepInfo step_info(const CatalogueStep& step, const char* open_step_design) {
    return {step.id, step.name, step.section, step.open ? design_words(open_step_design) : std::string()};
}

StepRecord& Results::entry(const StepInfo& step) {
    auto found = std::find_if(steps_.begin(), steps_.end(), [&](const StepRecord& r) { return r.step.id == step.id; });
    if (found != steps_.end()) return *found;
    steps_.push_back(StepRecord{step, std::nullopt, std::nullopt, {}});
    return steps_.back();
}

void Results::record_correctness(const StepInfo& step, const Verdict& verdict) {
    if (verdict.status == Status::not_selected) return;
    entry(step).correctness = verdict;
    save_if_asked();
}

void Results::record_perf(const StepInfo& step, const PerfRecord& record) {
    if (record.verdict.status == Status::not_selected) return;
    auto& record_of_step = entry(step);
    if (!record.variant.empty()) record_of_step.variants.push_back(record);
    auto& slot = record_of_step.perf;
    const bool better = !slot || (record.verdict.passed() && (!slot->verdict.passed() || record.ms < slot->ms));
    if (better) slot = record;
    save_if_asked();
}

void Results::record_table(TableRecord table) {
    tables_.push_back(std::move(table));
    save_if_asked();
}

void Results::save_if_asked() const {
    // After every step, so that a later crash or hang still leaves the steps already judged.
    const std::string& path = run_options().results_path;
    if (this == &results() && !path.empty()) write(path);
}

bool Results::all_not_implemented() const {
    bool any = false;
    for (const auto& record : steps_) {
        // A step this machine cannot run (skipped) says nothing about the starter.
        if (!record.correctness || record.correctness->status == Status::skipped) continue;
        if (record.correctness->status != Status::not_implemented) return false;
        any = true;
    }
    return any;
}

std::string Results::to_json() const {
    std::string steps;
    for (const auto& record : steps_) {
        if (!steps.empty()) steps += ",\n    ";
        std::string variants;
        for (const auto& variant : record.variants) {
            variants += fmt::format("{}{}", variants.empty() ? "" : ", ", json_perf(variant));
        }
        steps += fmt::format(
            R"({{"id": {}, "name": {}, "section": {},{} "correctness": {}, "perf": {}, "variants": [{}]}})",
            json_string(record.step.id), json_string(record.step.name), record.step.section,
            record.step.design.empty() ? "" : fmt::format(R"( "design": {},)", json_string(record.step.design)),
            record.correctness ? json_verdict(*record.correctness) : "null",
            record.perf ? json_perf(*record.perf) : "null", variants);
    }
    const std::string roof =
        roof_ ? fmt::format(R"({{"name": {}, "value": {}, "unit": {}, "ceiling": {}}})", json_string(roof_->name),
                            json_number(roof_->value), json_string(roof_->unit), json_number(roof_->ceiling))
              : "null";
    std::string tables;
    for (const auto& table : tables_) tables += fmt::format("{}{}", tables.empty() ? "" : ",\n    ", json_table(table));
    return fmt::format(
        "{{\n  \"schema\": \"cuda-labs-results/1\",\n  \"lab\": {},\n  \"seed\": {},\n  \"device\": {},\n"
        "  \"skipped\": {},\n  \"problem\": {},\n  \"roof\": {},\n  \"steps\": [\n    {}\n  ],\n"
        "  \"tables\": [\n    {}\n  ]\n}}\n",
        json_string(lab_), run_options().seed, json_string(device_), json_string(skipped_), json_string(problem_),
        roof, steps, tables);
}

void Results::write(const std::string& path) const {
    // Write a neighbour, then rename: a reader never sees half a file.
    const std::string partial = path + ".partial";
    {
        std::ofstream out(partial);
        out << to_json();
        if (!out) throw std::runtime_error("cannot write results to " + partial);
    }
    if (std::rename(partial.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename results to " + path);
}

Results& results() {
    static Results instance;
    return instance;
}

}  // namespace cl
