// SPDX-License-Identifier: MIT
// The performance table every lab prints: one row per step with its time, throughput,
// share of the roof and speed-up against the previous step that ran correctly ("vs prev": the
// ratio of throughputs, so that rows measured on different problem sizes compare fairly).
#pragma once

#include "results.hpp"

#include <string>
#include <vector>

namespace cl {

class PerfTable {
public:
    /// `title` names the lab and device; `problem` the size ("8192 x 8192 float");
    /// `unit` the throughput ("GB/s"); `extra_columns` any lab-specific columns.
    PerfTable(std::string title, std::string problem, Roof roof, std::string unit,
              std::vector<std::string> extra_columns = {});

    /// A row. A step that did not pass shows its verdict in place of the numbers.
    void add_row(const StepInfo& step, const Verdict& verdict, double ms, double throughput,
                 std::vector<std::string> extras = {});

    /// The whole table as text; `colour` adds ANSI colours to the verdicts.
    std::string render(bool colour) const;
    /// Prints to stdout, coloured only when stdout is a terminal and NO_COLOR is unset, and records
    /// the table in the results (Results::record_table), from which the docs render it.
    void print() const;

    double percent_of_roof(double throughput) const;
    const Roof& roof() const noexcept { return roof_; }

    using Row = TableRow;

private:
    std::string title_;
    std::string problem_;
    Roof roof_;
    std::string unit_;
    std::vector<std::string> extra_columns_;
    std::vector<Row> rows_;
};

/// A step's name as the table prints it: an open step's with its author's design words beside it.
std::string shown_name(const StepInfo& step);

/// "vs prev" of `row`: its throughput over `previous`'s (their times' ratio where a row has none).
double speedup_over(const PerfTable::Row& previous, const PerfTable::Row& row);

/// Whether stdout should get colours (a terminal, and NO_COLOR unset).
bool use_colour();

/// "PASS" in green, "FAIL" in red... when `colour`; plain otherwise.
std::string paint(std::string_view text, Status status, bool colour);

/// Milliseconds with four significant digits: "0.3512 ms", "412.3 ms".
std::string format_ms(double ms);

}  // namespace cl
