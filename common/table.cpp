// SPDX-License-Identifier: MIT
// The perf table.
#include "table.hpp"

#include <fmt/color.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace cl {
namespace {

std::string short_verdict(const Verdict& verdict) {
    switch (verdict.status) {
        case Status::not_implemented: return "not implemented yet";
        case Status::wrong: return "wrong result";
        case Status::error: return "CUDA error";
        case Status::skipped: return "not run";
        case Status::passed:
        case Status::not_selected: return "";
    }
    return "";
}

}  // namespace

// Throughputs, not times: a CPU row on a smaller problem (step 0 of several labs) would otherwise
// read as a slow-down. Rows without a throughput fall back to the ratio of their times.
double speedup_over(const PerfTable::Row& previous, const PerfTable::Row& row) {
    if (previous.throughput > 0 && row.throughput > 0) return row.throughput / previous.throughput;
    return row.ms > 0 ? previous.ms / row.ms : 0.0;
}

bool use_colour() { return std::getenv("NO_COLOR") == nullptr && isatty(fileno(stdout)) != 0; }

std::string paint(std::string_view text, Status status, bool colour) {
    if (!colour) return std::string(text);
    const auto color = status == Status::passed            ? fmt::terminal_color::green
                       : status == Status::not_implemented || status == Status::skipped ? fmt::terminal_color::yellow
                                                           : fmt::terminal_color::red;
    return fmt::format(fmt::fg(color), "{}", text);
}

std::string format_ms(double ms) { return fmt::format("{:.4g} ms", ms); }

PerfTable::PerfTable(std::string title, std::string problem, Roof roof, std::string unit,
                     std::vector<std::string> extra_columns)
    : title_(std::move(title)),
      problem_(std::move(problem)),
      roof_(std::move(roof)),
      unit_(std::move(unit)),
      extra_columns_(std::move(extra_columns)) {}

void PerfTable::add_row(const StepInfo& step, const Verdict& verdict, double ms, double throughput,
                        std::vector<std::string> extras) {
    if (verdict.status == Status::not_selected) return;  // --step=N: only that step's row
    extras.resize(extra_columns_.size());
    rows_.push_back(Row{step, verdict, ms, throughput, std::move(extras)});
}

double PerfTable::percent_of_roof(double throughput) const {
    return roof_.value > 0 ? 100.0 * throughput / roof_.value : 0.0;
}

std::string shown_name(const StepInfo& step) {
    return step.design.empty() ? step.name : fmt::format("{} (design: {})", step.name, step.design);
}

std::string PerfTable::render(bool colour) const {
    std::size_t name_width = 4;
    for (const auto& row : rows_) name_width = std::max(name_width, shown_name(row.step).size());
    std::vector<std::size_t> extra_width;
    for (std::size_t c = 0; c < extra_columns_.size(); ++c) {
        std::size_t width = extra_columns_[c].size();
        for (const auto& row : rows_) width = std::max(width, row.extras[c].size());
        extra_width.push_back(width);
    }

    std::string out = fmt::format("{}\nproblem: {} | roof: {}\n", title_, problem_, describe(roof_));
    std::string header = fmt::format("{:<5} {:<{}} {:>11} {:>10} {:>9} {:>9}", "step", "name", name_width, "time",
                                     unit_, "% roof", "vs prev");
    for (std::size_t c = 0; c < extra_columns_.size(); ++c) header += fmt::format("  {:>{}}", extra_columns_[c], extra_width[c]);
    out += header + "\n" + std::string(header.size(), '-') + "\n";

    const Row* previous = nullptr;
    for (const auto& row : rows_) {
        std::string line = fmt::format("{:<5} {:<{}} ", row.step.id, shown_name(row.step), name_width);
        if (row.verdict.passed()) {
            const std::string speedup = previous != nullptr ? fmt::format("{:.2f}x", speedup_over(*previous, row)) : "";
            line += fmt::format("{:>11} {:>10.1f} {:>8.1f}% {:>9}", format_ms(row.ms), row.throughput,
                                percent_of_roof(row.throughput), speedup);
            previous = &row;
        } else {
            line += paint(fmt::format("{:>42}", short_verdict(row.verdict)), row.verdict.status, colour);
        }
        for (std::size_t c = 0; c < extra_columns_.size(); ++c) line += fmt::format("  {:>{}}", row.extras[c], extra_width[c]);
        out += line + "\n";
    }
    out += fmt::format("vs prev: this row's {} over the previous passing row's (a speed-up where both do the same "
                       "work; rows on a smaller problem compare fairly too)\n",
                       unit_);
    return out;
}

void PerfTable::print() const {
    results().record_table({title_, problem_, roof_, unit_, extra_columns_, rows_});
    fmt::print("\n{}\n", render(use_colour()));
    // What went wrong in a row that did not pass, in full (the table has room for a word only).
    for (const auto& row : rows_) {
        if (row.verdict.passed() || row.verdict.status == Status::not_implemented || row.verdict.message.empty()) {
            continue;
        }
        fmt::print("  [{}] {}\n", row.step.name, row.verdict.message);
    }
    std::fflush(stdout);
}

}  // namespace cl
