// SPDX-License-Identifier: MIT
// Verdicts per step, collected for the whole run, and written as JSON for the grader.
#pragma once

#include "step_catalogue.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cl {

/// `not_selected`: left out by --step=N; it is neither run, printed nor recorded.
enum class Status { passed, not_implemented, wrong, error, skipped, not_selected };

/// "passed", "not_implemented", "wrong", "error", "skipped", "not_selected": the names the JSON uses.
std::string_view to_string(Status status);

struct Verdict {
    Status status = Status::skipped;
    std::string message;
    /// Nothing wrong: passed, or left out by --step (so that a lab's CHECKs hold for the rest).
    bool passed() const noexcept { return status == Status::passed || status == Status::not_selected; }
};

/// One step of a lab: `id` as the table and the grader name it ("3"), a short name,
/// and the lab sheet's section that explains it.
struct StepInfo {
    std::string id;
    std::string name;
    int section = 0;
    /// An open step's design in its author's words (the student file's kOpenStepDesign), shown beside
    /// the name; empty: none given, or not an open step.
    std::string design = {};
};

/// The most characters of a student's design words that the table and the results keep.
inline constexpr std::size_t kDesignLength = 40;

/// `text` as the table may show it: printable ASCII only (anything else dropped), spaces trimmed,
/// at most kDesignLength characters (the text is read no further than that).
std::string design_words(const char* text);

/// A catalogue step as the table and the results show it; for an open step, with `open_step_design`
/// (the student's kOpenStepDesign) as its design words.
StepInfo step_info(const CatalogueStep& step, const char* open_step_design = nullptr);

/// The practical limit a lab is measured against, and the physical one above it.
struct Roof {
    std::string name;    ///< "memcpy D2D", "cuBLAS SGEMM"
    double value = 0;    ///< in `unit`
    std::string unit;    ///< "GB/s", "GFLOP/s"
    double ceiling = 0;  ///< what the hardware cannot exceed, in `unit` (theoretical DRAM bandwidth,
                         ///< FP32 rate...); a step above it did not do its work. 0: none known
};

/// "NAME VALUE UNIT", as a table's header and a note under it print a roof ("memcpy D2D 3057.1 GB/s").
std::string describe(const Roof& roof);

struct PerfRecord {
    Verdict verdict;  ///< correctness of the timed run's output
    double ms = 0;
    double throughput = 0;
    std::string unit;
    double percent_of_roof = 0;
    std::string variant;  ///< the configuration timed, if a step has several ("256 threads")
};

/// A row of a printed perf table (common/table.hpp), as the results keep it.
struct TableRow {
    StepInfo step;
    Verdict verdict;
    double ms = 0;
    double throughput = 0;
    std::vector<std::string> extras;  ///< the lab's own columns, as printed
};

/// A perf table as printed: what the docs render their tables from (tools/docs/fill_tables.py), so
/// that nothing is read back from printed text. "% roof" and "vs prev" follow from the rest.
struct TableRecord {
    std::string title;  ///< "01-matadd on <device>"
    std::string problem;
    Roof roof;
    std::string unit;
    std::vector<std::string> extra_columns;
    std::vector<TableRow> rows;
};

struct StepRecord {
    StepInfo step;
    std::optional<Verdict> correctness;
    std::optional<PerfRecord> perf;   ///< the fastest passing variant (or the last failure)
    std::vector<PerfRecord> variants;  ///< every timed variant, in order (sweeps: block sizes, strides...)
};

/// Everything this process found. One per process: `results()`.
class Results {
public:
    void set_lab(std::string lab) { lab_ = std::move(lab); }
    const std::string& lab() const noexcept { return lab_; }
    void set_device(std::string summary) { device_ = std::move(summary); }
    void set_problem(std::string problem) { problem_ = std::move(problem); }
    void set_roof(Roof roof) { roof_ = std::move(roof); }
    void set_skipped(std::string reason) { skipped_ = std::move(reason); }

    void record_correctness(const StepInfo& step, const Verdict& verdict);
    /// Keeps the fastest passing record when a step is timed in several variants.
    void record_perf(const StepInfo& step, const PerfRecord& record);
    /// A table as printed, in the order printed (PerfTable::print).
    void record_table(TableRecord table);

    const std::vector<StepRecord>& steps() const noexcept { return steps_; }
    const std::vector<TableRecord>& tables() const noexcept { return tables_; }
    /// True when correctness ran for at least one step and every step said "not implemented"
    /// (steps skipped for a missing capability are left out).
    bool all_not_implemented() const;

    std::string to_json() const;
    /// Writes the JSON to `path` (atomically: a temporary file, then a rename).
    void write(const std::string& path) const;

private:
    StepRecord& entry(const StepInfo& step);
    void save_if_asked() const;  ///< after each record, when --results was given

    std::string lab_;
    std::string device_;
    std::string problem_;
    std::optional<Roof> roof_;
    std::string skipped_;
    std::vector<StepRecord> steps_;
    std::vector<TableRecord> tables_;
};

Results& results();

/// `text` as a JSON string literal, quotes included.
std::string json_string(std::string_view text);

}  // namespace cl
