# SPDX-License-Identifier: MIT
"""A run's perf tables as text, rendered from its results file (coursemodel.results), never read
back from printed output.

`render(table)` is the text common/table.cpp's PerfTable::render prints without colour, from the
table the harness recorded ("tables" in the results file): the same columns, widths and numbers
("% roof" and "vs prev" computed by the same rules). `tables_of(run)` gives a run's tables: the
recorded ones, or, for a file written before tables were recorded, one table made from the steps'
perf records (`from_steps`: no CPU step 0, no lab-specific columns, one table for the whole lab).
`block(run)` is what the docs show of a run: the harness's banner line, then every table (lines
without trailing spaces).
"""
from __future__ import annotations

from coursemodel.results import Roof, Run, Table, TableRow

SHORT_VERDICT = {"not_implemented": "not implemented yet", "wrong": "wrong result", "error": "CUDA error",
                 "skipped": "not run", "passed": ""}


def format_ms(ms: float) -> str:
    """common/table.cpp format_ms: four significant digits."""
    return f"{ms:.4g} ms"


def percent_of_roof(table: Table, throughput: float) -> float:
    value = table.roof.value or 0.0
    return 100.0 * throughput / value if value > 0 else 0.0


def speedup_over(previous: TableRow, row: TableRow) -> float:
    """common/table.cpp speedup_over: the ratio of throughputs, else of times."""
    before, now = previous.throughput or 0.0, row.throughput or 0.0
    if before > 0 and now > 0:
        return now / before
    return (previous.time_ms or 0.0) / row.time_ms if (row.time_ms or 0.0) > 0 else 0.0


def render(table: Table) -> str:
    """The table as the harness printed it (uncoloured), ending with its "vs prev" note."""
    name_width = max([4] + [len(row.shown_name) for row in table.rows])
    extras = [tuple(row.extras) + ("",) * (len(table.extra_columns) - len(row.extras)) for row in table.rows]
    widths = [max([len(column)] + [len(e[c]) for e in extras]) for c, column in enumerate(table.extra_columns)]
    roof = table.roof
    out = f"{table.title}\nproblem: {table.problem} | roof: {roof.name} {roof.value or 0.0:.1f} {roof.unit}\n"
    header = f"{'step':<5} {'name':<{name_width}} {'time':>11} {table.unit:>10} {'% roof':>9} {'vs prev':>9}"
    header += "".join(f"  {column:>{width}}" for column, width in zip(table.extra_columns, widths))
    out += header + "\n" + "-" * len(header) + "\n"
    previous = None
    for row, row_extras in zip(table.rows, extras):
        line = f"{row.id:<5} {row.shown_name:<{name_width}} "
        if row.status == "passed":
            speedup = f"{speedup_over(previous, row):.2f}x" if previous is not None else ""
            throughput = row.throughput or 0.0
            line += (f"{format_ms(row.time_ms or 0.0):>11} {throughput:>10.1f} "
                     f"{percent_of_roof(table, throughput):>8.1f}% {speedup:>9}")
            previous = row
        else:
            line += f"{SHORT_VERDICT.get(row.status, ''):>42}"
        line += "".join(f"  {extra:>{width}}" for extra, width in zip(row_extras, widths))
        out += line + "\n"
    out += (f"vs prev: this row's {table.unit} over the previous passing row's (a speed-up where both do the same "
            "work; rows on a smaller problem compare fairly too)\n")
    return out


def from_steps(run: Run) -> Table:
    """One table of the run's timed steps, from their perf records (for a file without "tables")."""
    roof = run.roof or Roof("", None, "")
    rows = []
    for step in run.steps:
        if step.perf is None:
            continue
        perf = step.perf
        rows.append(TableRow(step.id, step.name, step.design, perf.status, perf.time_ms, perf.throughput))
    unit = next((s.perf.unit for s in run.steps if s.perf and s.perf.unit), roof.unit)
    if roof.value is None:
        # The roof the perf records were measured against, as their throughput and share imply.
        implied = [p.throughput * 100.0 / p.percent_of_roof for s in run.steps if (p := s.timed())
                   and p.throughput and p.percent_of_roof]
        roof = Roof(roof.name, implied[0] if implied else None, roof.unit or unit, roof.ceiling)
    return Table(f"{run.lab} on {run.device}", run.problem, roof, unit, (), tuple(rows))


def tables_of(run: Run) -> list[Table]:
    return list(run.tables) if run.tables else [from_steps(run)]


def banner(run: Run) -> str:
    """The harness's first line (common/harness.cpp print_banner)."""
    return f"{run.lab} on {run.device} | seed {run.seed}"


def block(run: Run) -> list[str]:
    """The lines the docs show of a run: its banner, then each table after a blank line."""
    lines = [banner(run)]
    for table in tables_of(run):
        lines.append("")
        lines.extend(line.rstrip() for line in render(table).rstrip("\n").split("\n"))
    return lines
