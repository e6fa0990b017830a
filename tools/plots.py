# SPDX-License-Identifier: MIT
"""The plots of measured results: what each plot shows (pure Python, tested by
tools/test_tools.py without matplotlib), and its drawing (matplotlib, SVG). tools/figures.py
calls `plots(data_dir)`.

Everything is driven by the results files (schema "cuda-labs-results/1", common/results.cpp), so
that a new step, a new variant sweep or a new lab appears without a change here:
- every lab gets a steps plot: each step's share of *its own* roof. A step's roof is the one its
  table printed: its "perf" record's "roof" where the file has one, else the value that the
  record's throughput and "% roof" imply; steps with different roofs are drawn in separate
  panels, each under the name and value of its roof. A reference that a step beats by more than
  10% (a given baseline, not a limit) is called a baseline;
- every step whose timed variants sweep a number ("offset 7", "256 threads per block") with at
  least three values gets a sweep plot; steps of one lab that sweep the same thing share one;
- the roofline places every step of the labs that do floating-point work, from the intensity
  rules below (by lab and sheet section, so a new step of such a lab appears by itself); every
  other step is listed with the reason it is left out.
"""
from __future__ import annotations

import io
import json
import textwrap
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

# Okabe and Ito's palette (distinguishable with every common colour-vision deficiency) without its
# black and its yellow (black is for roofs, yellow is faint on white), then two dark colours of
# Paul Tol's; each series also has its own marker, so that no plot rests on colour alone.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#332288", "#882255"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
ROOF_COLOUR = "#000000"
MODEL_COLOUR = "#7f7f7f"
NOISE = 1.10  # a measured roof can be beaten by noise; beyond this it is a baseline, not a roof


# --- the results files ----------------------------------------------------------------------------


@dataclass
class LabResults:
    name: str
    device: str
    roof: dict | None
    steps: list[dict]

    def step(self, step_id: str) -> dict | None:
        return next((s for s in self.steps if str(s.get("id")) == step_id), None)

    def perf(self, step_id: str) -> dict | None:
        step = self.step(step_id)
        perf = step.get("perf") if step else None
        return perf if perf and perf.get("status") == "passed" else None

    def variants(self, step_id: str) -> list[dict]:
        """The step's timed variants that passed, in the order timed, the last of each label kept."""
        step = self.step(step_id)
        seen: dict[str, dict] = {}
        for record in (step.get("variants") or []) if step else []:
            if record.get("status") == "passed" and record.get("throughput") is not None:
                seen.pop(record.get("variant", ""), None)
                seen[record.get("variant", "")] = record
        return list(seen.values())


def load_results(path: Path) -> LabResults | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not str(data.get("schema", "")).startswith("cuda-labs-results/"):
        return None
    return LabResults(name=data.get("lab") or path.stem, device=data.get("device") or "", roof=data.get("roof"),
                      steps=[s for s in data.get("steps") or [] if isinstance(s, dict)])


def load_all(data_dir: Path) -> tuple[dict[str, LabResults], dict[str, str]]:
    labs: dict[str, LabResults] = {}
    unreadable: dict[str, str] = {}
    for path in sorted(data_dir.glob("[0-9][0-9]-*.json")) if data_dir.is_dir() else []:
        lab = load_results(path)
        if lab is None:
            unreadable[path.stem] = f"{path} is not a results file"
        else:
            labs[path.stem] = lab
    return labs, unreadable


def short_device(device: str) -> str:
    return device.split(" (")[0] if device else "the GPU"


def plain(value: float, digits: int = 4) -> str:
    """A number as a reader writes it: 51,664 and 2,038 and 0.083, never 5.166e+04."""
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - magnitude)
    if abs(value) >= 1000:
        decimals = 0
    return f"{value:,.{decimals}f}"


def section_of(step: dict) -> int | None:
    """The sheet section of a step: its "section", else the number its id starts with."""
    if isinstance(step.get("section"), int) and step["section"] > 0:
        return step["section"]
    match = re.match(r"\d+", str(step.get("id", "")))
    return int(match.group(0)) if match else None


# --- each step against its own roof ---------------------------------------------------------------


@dataclass
class Reference:
    """What a panel's bars are a share of: a roof, or a baseline the steps may beat."""
    name: str
    value: float
    unit: str
    kind: str = "roof"  # or "baseline"

    def title(self) -> str:
        return f"{self.kind}: {self.name}, {plain(self.value)} {self.unit}"


@dataclass
class Bar:
    step_id: str
    name: str
    throughput: float
    unit: str
    percent: float  # of the panel's reference, as the harness printed it


@dataclass
class Panel:
    reference: Reference
    bars: list[Bar] = field(default_factory=list)


def step_roof(lab: LabResults, perf: dict) -> tuple[str | None, float, str] | None:
    """(name or None, value, unit) of the roof a perf record was measured against."""
    own = perf.get("roof")
    if isinstance(own, dict) and own.get("value"):
        return own.get("name"), float(own["value"]), own.get("unit") or perf.get("unit", "")
    percent, throughput = perf.get("percent_of_roof"), perf.get("throughput")
    if not percent or not throughput or percent <= 0 or throughput <= 0:
        return None
    value = float(throughput) * 100.0 / float(percent)
    roof = lab.roof or {}
    if roof.get("value") and roof.get("unit") == perf.get("unit") and abs(value / float(roof["value"]) - 1) < 0.002:
        return roof.get("name"), float(roof["value"]), roof.get("unit", "")
    return None, value, perf.get("unit", "")


def steps_panels(lab: LabResults) -> tuple[list[Panel], dict[str, str]]:
    """The steps plot's panels (one per roof, in the order of their first step) and the steps
    left out with the reason."""
    panels: list[Panel] = []
    left_out: dict[str, str] = {}
    for step in lab.steps:
        step_id = str(step.get("id"))
        perf = step.get("perf")
        if step_id == "0":
            left_out[step_id] = "the CPU reference"
            continue
        if not perf or perf.get("status") != "passed":
            left_out[step_id] = f"not timed: {(perf or {}).get('status') or 'no timing'}"
            continue
        roof = step_roof(lab, perf)
        if roof is None:
            left_out[step_id] = "no roof to compare with"
            continue
        name, value, unit = roof
        panel = next((p for p in panels if p.reference.unit == unit
                      and abs(p.reference.value / value - 1) < 0.002), None)
        if panel is None:
            panel = Panel(Reference(name or "", value, unit))
            panels.append(panel)
        throughput = float(perf["throughput"])
        panel.bars.append(Bar(step_id, step.get("name", ""), throughput, perf.get("unit", ""),
                              100.0 * throughput / panel.reference.value))
    for panel in panels:
        if any(bar.percent > 100 * NOISE for bar in panel.bars):
            panel.reference.kind = "baseline"
        if not panel.reference.name:
            ids = ", ".join(bar.step_id for bar in panel.bars)
            panel.reference.name = f"the one printed in the table of step{'s' if len(panel.bars) > 1 else ''} {ids}"
    return panels, left_out


# --- sweeps of a step's variants --------------------------------------------------------------------


def variant_axis(label: str) -> tuple[str, float] | None:
    """("offset", 7) from "offset 7", ("threads per block", 256) from "256 threads per block",
    ("unroll", 4) from "unroll = 4"; None when the label holds no number."""
    match = re.search(r"\d+(?:\.\d+)?", label)
    if not match:
        return None
    before = label[:match.start()].strip().rstrip("=:").strip()
    after = label[match.end():].strip()
    name = before or re.sub(r"\(.*?\)", "", after).strip()
    return (name, float(match.group(0))) if name else None


@dataclass
class Series:
    step_id: str
    name: str
    points: list[tuple[float, float]]  # (x, throughput)
    roof: float | None


@dataclass
class Sweep:
    lab: str
    axis: str
    unit: str
    series: list[Series]
    roof_name: str


def sweeps(lab: LabResults) -> list[Sweep]:
    by_axis: dict[tuple[str, str], list[Series]] = {}
    roof_names: dict[tuple[str, str], str] = {}
    for step in lab.steps:
        step_id = str(step.get("id"))
        records = lab.variants(step_id)
        points, roofs, axis, unit = [], [], None, None
        for record in records:
            parsed = variant_axis(record.get("variant", ""))
            if not parsed or (axis is not None and parsed[0] != axis):
                continue
            axis, unit = parsed[0], record.get("unit", "")
            points.append((parsed[1], float(record["throughput"])))
            roof = step_roof(lab, record)
            if roof:
                roofs.append(roof)
        if len(points) < 3:
            continue
        roofs.sort(key=lambda r: r[1])
        roof = roofs[len(roofs) // 2] if roofs else None
        key = (axis, unit)
        by_axis.setdefault(key, []).append(Series(step_id, step.get("name", ""), sorted(points),
                                                  roof[1] if roof else None))
        if roof:
            roof_names.setdefault(key, roof[0] or "the roof printed in its table")
    return [Sweep(lab.name, axis, unit, series, roof_names.get((axis, unit), ""))
            for (axis, unit), series in by_axis.items()]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def sweep_name(sweep: Sweep) -> str:
    if len(sweep.series) == 1:
        return f"plots/{sweep.lab}-step-{sweep.series[0].step_id}-{slug(sweep.axis)}"
    return f"plots/{sweep.lab}-{slug(sweep.axis)}"


# A model drawn beside a sweep, where a lab's chapter explains one: (label, f(x, roof, points)).
SECTOR_FLOATS = 8  # floats per 32-byte sector
BANKS = 32
MODELS: dict[tuple[str, str], tuple[str, Callable[[float, float, list], float], str]] = {
    ("02-coalescing", "2"): (
        "sector model: 4 B written + 4 min(s, 8) B read per element",
        lambda s, roof, points: roof * 8 / (4 + 4 * min(s, SECTOR_FLOATS)),
        " The dashed grey line is what whole 32-byte sectors predict: the measured curve keeps falling "
        "past stride 8, the sign of a larger DRAM fetch."),
    ("05-transpose", "5"): (
        "bank model: fastest / gcd(s, 32)",
        lambda s, roof, points: max(y for _, y in points) / math.gcd(int(s), BANKS) if s else max(y for _, y in points),
        " Every stride with gcd(s, 32) = g > 1 is a g-way bank conflict (the grey model)."),
}


# --- the roofline ---------------------------------------------------------------------------------
# Arithmetic intensity (flops per byte of compulsory DRAM traffic) of the steps whose work is
# floating-point arithmetic, by lab and step id (a string: "6b") or sheet section (a number; "*": every other section; None: the section
# does no floating-point work). For GB/s tables the intensity converts the counted bytes into
# flops; for GFLOP/s tables the throughput is already flops and the intensity places the point.
# Keep in step with the labs' problem sizes and with the table on docs/roofline.md.
GEMM_4096 = 2 * 4096 ** 3 / (4 * 3 * 4096 ** 2)  # 682.7 flop/B: a, b read once, c written once
ROOFLINE_INTENSITY: dict[str, dict[object, float | None]] = {
    # 1 add per 12 bytes (two floats read, one written)
    "01-matadd": {"*": 1 / 12},
    # the particle update: 3 FMA (6 flops) per 36 counted bytes; the copies do no arithmetic
    "02-coalescing": {"*": None, 3: 6 / 36, 4: 6 / 36},
    # section 1 at 32 x 4096 x 32, the rest at 4096^3
    "03-matmul-naive": {"*": GEMM_4096, 1: 2 * 32 * 4096 * 32 / (4 * (32 * 4096 * 2 + 32 * 32))},
    "04-matmul-tiled": {"*": GEMM_4096},
    # 2^17 bodies, 20 flops per interaction; per body 16 bytes read (position, mass), 12 written
    "08-nbody": {"*": 20 * 2 ** 17 / 28},
    # 1 + 9R flops per point (centre product, then per axis and distance one add and one FMA),
    # 8 bytes: radius 1 (7 points), section 5 and step 6b radius 4 (25 points)
    "11-stencil": {"*": 10 / 8, 5: 37 / 8, "6b": 37 / 8},
}
# Labs whose flops run on other units than the FP32 pipes this plot's compute roof measures.
OTHER_ROOF_LABS = {"14-tensor-cores": "its flops run on the tensor cores, whose roof (cuBLAS, FP16 in) lies far above "
                                      "this plot's FP32 roof (see the roofline page)"}
MEMORY_ROOF_LABS = ("01-matadd", "02-coalescing", "05-transpose", "11-stencil")
COMPUTE_ROOF_LAB = "08-nbody"


@dataclass
class Point:
    lab: str
    step_id: str
    intensity: float
    gflops: float


@dataclass
class Roofline:
    bandwidth: float
    memory_name: str
    peak: float
    peak_name: str
    device: str
    points: list[Point]
    left_out: dict[str, dict[str, str]]  # lab -> step id -> why


def roofline(labs: dict[str, LabResults]) -> Roofline | str:
    memory = None
    for name in MEMORY_ROOF_LABS:
        lab = labs.get(name)
        if lab and lab.roof and lab.roof.get("unit") == "GB/s" and lab.roof.get("value"):
            memory = (float(lab.roof["value"]), lab.roof.get("name", "memcpy"), lab.device)
            break
    compute = None
    lab = labs.get(COMPUTE_ROOF_LAB)
    if lab and lab.roof and lab.roof.get("unit") == "GFLOP/s" and lab.roof.get("value"):
        compute = (float(lab.roof["value"]), lab.roof.get("name", "FP32 FMA"))
    if not memory or not compute:
        missing = [what for what, have in ((f"a memory roof ({MEMORY_ROOF_LABS[0]})", memory),
                                            (f"the FP32 roof ({COMPUTE_ROOF_LAB})", compute)) if not have]
        return "the roofline needs " + " and ".join(missing)
    points: list[Point] = []
    left_out: dict[str, dict[str, str]] = {}
    for name, lab in labs.items():
        rules = ROOFLINE_INTENSITY.get(name)
        for step in lab.steps:
            step_id = str(step.get("id"))
            why = None
            perf = step.get("perf") or {}
            intensity = None
            if name in OTHER_ROOF_LABS:
                why = OTHER_ROOF_LABS[name]
            elif rules is None:
                why = "its lab does no floating-point work worth the name (see the roofline page)"
            elif step_id == "0":
                why = "the CPU reference"
            elif perf.get("status") != "passed" or not perf.get("throughput"):
                why = f"not timed: {perf.get('status') or 'no timing'}"
            elif perf.get("unit") not in ("GB/s", "GFLOP/s"):
                why = f"its unit, {perf.get('unit')}, counts no flops"
            else:
                intensity = rules.get(step_id, rules.get(section_of(step), rules.get("*")))
                if intensity is None:
                    why = "no floating-point work (a copy)"
            if why:
                left_out.setdefault(name, {})[step_id] = why
                continue
            value = float(perf["throughput"])
            points.append(Point(name, step_id, intensity, value * intensity if perf["unit"] == "GB/s" else value))
    bandwidth, memory_name, device = memory
    peak, peak_name = compute
    return Roofline(bandwidth, memory_name, peak, peak_name, device, points, left_out)


# --- drawing (matplotlib) ---------------------------------------------------------------------------


@dataclass
class Plot:
    name: str  # "plots/NN-name-steps"
    alt: str
    caption: str
    svg: str
    data: dict


def _figure(width: float, height: float):
    from matplotlib.figure import Figure as MplFigure
    return MplFigure(figsize=(width, height))


def _svg(figure) -> str:
    import matplotlib
    out = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "cuda-labs", "svg.fonttype": "none"}):
        figure.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def _style():
    import matplotlib
    return matplotlib.rc_context({
        "font.family": "DejaVu Sans", "font.size": 10, "axes.titlesize": 10, "axes.titlelocation": "left",
        "axes.spines.top": False, "axes.spines.right": False, "axes.edgecolor": "#555555",
        "axes.grid": True, "grid.color": "#dddddd", "grid.linewidth": 0.6, "axes.axisbelow": True,
        "xtick.color": "#333333", "ytick.color": "#333333", "legend.frameon": False,
    })


def tick(value: float) -> str:
    """An axis tick: 0.1, 1, 64, 1,024, 100,000."""
    if value >= 1000 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:g}"


def _plain_formatter():
    from matplotlib.ticker import FuncFormatter
    return FuncFormatter(lambda value, _: tick(value) if value > 0 else "0")


def _short(text: str, length: int = 46) -> str:
    return text if len(text) <= length else text[:length - 1].rstrip() + "…"


def draw_steps(lab: LabResults) -> Plot | str:
    panels, left_out = steps_panels(lab)
    if not panels:
        return f"no timed step passed in {lab.name}'s results"
    with _style():
        rows = sum(len(p.bars) for p in panels)
        figure = _figure(8.0, 1.0 + 0.4 * rows + 0.75 * len(panels))
        grid = figure.add_gridspec(len(panels), 1, height_ratios=[len(p.bars) + 1.2 for p in panels],
                                   left=0.36, right=0.97, top=1 - 0.55 / figure.get_figheight(),
                                   bottom=0.5 / figure.get_figheight(), hspace=0.9)
        for index, panel in enumerate(panels):
            ax = figure.add_subplot(grid[index])
            bars = panel.bars
            ys = list(range(len(bars)))[::-1]
            colour = PALETTE[index % len(PALETTE)]
            ax.barh(ys, [b.percent for b in bars], height=0.62, color=colour, alpha=0.85)
            high = max(135.0, max(b.percent for b in bars) * 1.5)
            ax.set_xlim(0, high)
            ax.axvline(100, color=ROOF_COLOUR, linestyle="--", linewidth=1.1)
            ax.set_yticks(ys, [f"{b.step_id}  " + "\n".join(textwrap.wrap(_short(b.name, 66), 34)) for b in bars],
                          fontsize=8.5)
            ax.tick_params(axis="y", length=0)
            ax.grid(axis="y", visible=False)
            for y, bar in zip(ys, bars):
                ax.annotate(f"{bar.percent:.1f}%  ({plain(bar.throughput)} {bar.unit})", (bar.percent, y),
                            xytext=(4, 0), textcoords="offset points", va="center", fontsize=8,
                            bbox={"boxstyle": "square,pad=0.15", "facecolor": "white", "edgecolor": "none"})
            ax.set_title(_short(panel.reference.title(), 95), fontsize=9)
            ax.set_xlabel(f"% of this {panel.reference.kind} (dashed line: 100%)", fontsize=8.5)
            ax.set_ylim(-0.6, len(bars) - 0.4)
        figure.suptitle(f"{lab.name}: each step against its own roof, {short_device(lab.device)}",
                        x=0.02, ha="left", fontsize=10.5, fontweight="bold")
        svg = _svg(figure)
    several = len(panels) > 1
    caption = (f"Every timed step of lab {lab.name} that passed, as a share of the roof its table printed "
               f"(measured in the same run on the {short_device(lab.device)}; the table's \"% roof\" column)"
               + (": its steps use different roofs, so each panel has its own." if several else "."))
    if any(p.reference.kind == "baseline" for p in panels):
        caption += " A baseline is a given version the steps are meant to beat, not a limit."
    data = {"panels": [{"reference": vars(p.reference), "bars": [vars(b) for b in p.bars]} for p in panels],
            "left_out": left_out}
    return Plot(f"plots/{lab.name}-steps", f"Each step of lab {lab.name} as a percentage of its own roof", caption,
                svg, data)


def draw_sweep(lab: LabResults, sweep: Sweep) -> Plot:
    model = MODELS.get((lab.name, sweep.series[0].step_id)) if len(sweep.series) == 1 else None
    xs = sorted({x for s in sweep.series for x, _ in s.points})
    ys = [y for s in sweep.series for _, y in s.points]
    roofs = sorted({s.roof for s in sweep.series if s.roof})
    with _style():
        figure = _figure(8.0, 4.3)
        ax = figure.add_axes([0.1, 0.14, 0.56 if len(sweep.series) > 1 else 0.86, 0.72])
        powers_of_two = all(x > 0 and math.log2(x).is_integer() for x in xs) and xs[-1] / xs[0] >= 8
        if powers_of_two:
            ax.set_xscale("log", base=2)
        for index, series in enumerate(sweep.series):
            px = [x for x, _ in series.points]
            py = [y for _, y in series.points]
            label = f"step {series.step_id}: {_short(series.name, 30)}" if len(sweep.series) > 1 else "measured"
            ax.plot(px, py, marker=MARKERS[index % len(MARKERS)], markersize=4, linewidth=1.6,
                    color=PALETTE[index % len(PALETTE)], label=label)
        for roof in roofs:
            ax.axhline(roof, color=ROOF_COLOUR, linestyle="--", linewidth=1.1)
        if roofs:
            ax.plot([], [], color=ROOF_COLOUR, linestyle="--", linewidth=1.1,
                    label=f"roof: {_short(sweep.roof_name, 30)},\n{plain(roofs[-1])} {sweep.unit}"
                    if len(sweep.series) > 1 else f"roof: {sweep.roof_name}, {plain(roofs[-1])} {sweep.unit}")
        if model:
            series = sweep.series[0]
            values = [model[1](x, series.roof or max(ys), series.points) for x in xs]
            ax.plot(xs, values, color=MODEL_COLOUR, linestyle=":", linewidth=1.5, label=model[0])
            ys += values
        top = max(ys + roofs)
        if max(ys) / max(min(ys), 1e-9) > 15:
            from matplotlib.ticker import LogLocator
            ax.set_yscale("log")
            ax.set_ylim(min(ys) / 1.5, top * 1.6)
            if math.log10(top * 1.6) - math.log10(min(ys) / 1.5) <= 3:
                ax.yaxis.set_major_locator(LogLocator(subs=(1, 2, 5)))
        else:
            ax.set_ylim(0, top * 1.12)
        ax.yaxis.set_major_formatter(_plain_formatter())
        ax.xaxis.set_major_formatter(_plain_formatter())
        if powers_of_two or len(xs) <= 12:
            ax.set_xticks(xs)
        elif len(xs) <= 40:
            ax.set_xticks([x for i, x in enumerate(xs) if i % 2 == 0])
        ax.set_xlabel(sweep.axis)
        ax.set_ylabel(sweep.unit)
        if len(sweep.series) > 1:
            ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8)
        else:
            ax.legend(loc="best", fontsize=8)
        first = sweep.series[0]
        title = (f"{lab.name}, step {first.step_id} ({_short(first.name, 40)}): {sweep.unit} against {sweep.axis}"
                 if len(sweep.series) == 1 else f"{lab.name}: {sweep.unit} of each step against {sweep.axis}")
        figure.suptitle(title, x=0.02, ha="left", fontsize=10.5, fontweight="bold")
        figure.text(0.02, 0.905, f"measured on the {short_device(lab.device)}", fontsize=8.5, color="#555555")
        svg = _svg(figure)
    steps = ", ".join(s.step_id for s in sweep.series)
    caption = (f"The timed variants of step{'s' if len(sweep.series) > 1 else ''} {steps} of lab {lab.name}: "
               f"{sweep.unit} against {sweep.axis}, with the roof measured in the same run.")
    if model:
        caption += model[2]
    data = {"axis": sweep.axis, "unit": sweep.unit,
            "series": [{"step": s.step_id, "points": s.points, "roof": s.roof} for s in sweep.series]}
    return Plot(sweep_name(sweep), f"{sweep.unit} of lab {lab.name}, step {steps}, against {sweep.axis}", caption,
                svg, data)


def _label_columns(ax, figure, points: list[Point], labs: list[str]) -> None:
    """Each lab's step ids beside its points, moved apart where they would overlap, with a thin
    line back to the point, placed clear of other labs' points (see below)."""
    to_pixels = ax.transData.transform
    columns: dict[tuple[str, float], list[Point]] = {}
    for p in points:
        columns.setdefault((p.lab, round(math.log10(p.intensity), 3)), []).append(p)
    # Where another lab's column stands at the same intensity, the first of the two puts its
    # labels on the left; where one stands a little to the right (closer than `near` pixels), its
    # labels go right but stack downwards, away from the neighbour's points (higher: more flops
    # per byte at the same bandwidth). Otherwise labels go right and stack upwards.
    near = 45.0
    x_of = {key: to_pixels((members[0].intensity, 1.0))[0] for key, members in columns.items()}
    mode: dict[tuple[str, float], tuple[int, int]] = {}
    for key in columns:
        others = [k for k in columns if k[0] != key[0]]
        same = [k for k in others if abs(x_of[k] - x_of[key]) < 1.0]
        if same and labs.index(key[0]) < min(labs.index(k[0]) for k in same):
            mode[key] = (-1, 1)
        elif any(0 < x_of[k] - x_of[key] < near for k in others):
            mode[key] = (1, -1)
        else:
            mode[key] = (1, 1)
    gap = 12.5  # pixels between two labels
    scale = figure.dpi / 72.0
    for (lab, key), members in columns.items():
        colour = PALETTE[labs.index(lab) % len(PALETTE)]
        side_of, direction = mode[(lab, key)]
        placed = []  # [pixel y, [ids], point pixel y], in the order labels are stacked
        for p in sorted(members, key=lambda p: direction * p.gflops):
            y = to_pixels((p.intensity, p.gflops))[1]
            if placed and abs(y - placed[-1][2]) < 3:
                placed[-1][1].append(p.step_id)  # the same place: one label "3, 4"
                placed[-1][1].sort(key=lambda i: (len(i), i))
                continue
            placed.append([y, [p.step_id], y])
        for i in range(1, len(placed)):
            if direction > 0:
                placed[i][0] = max(placed[i][0], placed[i - 1][0] + gap)
            else:
                placed[i][0] = min(placed[i][0], placed[i - 1][0] - gap)
        x_pixel = to_pixels((members[0].intensity, members[0].gflops))[0]
        for label_y, ids, point_y in placed:
            dx, dy = side_of * 7, label_y - point_y
            ax.annotate(", ".join(ids), (members[0].intensity, ax.transData.inverted().transform((x_pixel, point_y))[1]),
                        xytext=(dx, dy / scale), textcoords="offset points",
                        ha="left" if side_of > 0 else "right", va="center", fontsize=8.5, color=colour,
                        arrowprops={"arrowstyle": "-", "color": colour, "linewidth": 0.5, "shrinkA": 0,
                                    "shrinkB": 3} if abs(dy) > 2 else None)


def draw_roofline(labs: dict[str, LabResults]) -> Plot | str:
    result = roofline(labs)
    if isinstance(result, str):
        return result
    line = result
    if not line.points:
        return "no step of a lab with floating-point work passed"
    names = sorted({p.lab for p in line.points})
    ridge = line.peak / line.bandwidth
    xs = [p.intensity for p in line.points] + [ridge]
    ys = [p.gflops for p in line.points]
    with _style():
        figure = _figure(7.4, 5.4)
        ax = figure.add_axes([0.13, 0.11, 0.6, 0.72])
        ax.set_xscale("log")
        ax.set_yscale("log")
        low_x, high_x = min(xs) / 2.5, max(xs) * 4
        low_y, high_y = min(ys) / 2.5, line.peak * 2.2
        ax.set_xlim(low_x, high_x)
        ax.set_ylim(low_y, high_y)
        start = max(low_x, low_y / line.bandwidth)
        ax.plot([start, ridge, high_x], [start * line.bandwidth, line.peak, line.peak], color=ROOF_COLOUR,
                linewidth=2, label="roof")
        ax.annotate(f"ridge: {plain(ridge, 3)} flop/B", (ridge, line.peak), xytext=(6, 6), textcoords="offset points",
                    fontsize=8)
        for index, name in enumerate(names):
            members = [p for p in line.points if p.lab == name]
            ax.scatter([p.intensity for p in members], [p.gflops for p in members], s=26, zorder=3,
                       marker=MARKERS[index % len(MARKERS)], color=PALETTE[index % len(PALETTE)],
                       edgecolors="white", linewidths=0.6, label=name)
        ax.xaxis.set_major_formatter(_plain_formatter())
        ax.yaxis.set_major_formatter(_plain_formatter())
        ax.set_xlabel("arithmetic intensity (flop per byte of compulsory DRAM traffic)")
        ax.set_ylabel("GFLOP/s")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8.5,
                  title="numbers: step ids", title_fontsize=8)
        figure.suptitle("Roofline: the steps against the measured memory and FP32 roofs", x=0.02, ha="left",
                        fontsize=10.5, fontweight="bold")
        figure.text(0.02, 0.875, f"{short_device(line.device)}\nmemory: {line.memory_name}, {plain(line.bandwidth)} "
                    f"GB/s; FP32: {line.peak_name}, {plain(line.peak)} GFLOP/s", fontsize=8, color="#555555")
        _label_columns(ax, figure, line.points, names)
        svg = _svg(figure)
    data = {"bandwidth": line.bandwidth, "peak": line.peak, "points": [vars(p) for p in line.points],
            "left_out": line.left_out}
    return Plot("plots/roofline", "Roofline of the measured memory bandwidth and FP32 rate with every step as a point",
                f"The roof is min(FP32 rate, intensity x bandwidth), both measured on the "
                f"{short_device(line.device)}. A point's height is the step's measured rate; its distance below the "
                "roof is what the step leaves on the table. Every timed step of the labs with floating-point work "
                "is a point, labelled with its step id.", svg, data)


def plots(data_dir: Path) -> tuple[list[Plot], dict[str, str]]:
    """Every plot the results in `data_dir` allow, and the plots skipped with the reason."""
    labs, skipped = load_all(data_dir)
    figures: list[Plot] = []

    def add(name: str, result: Plot | str) -> None:
        if isinstance(result, Plot):
            figures.append(result)
        else:
            skipped[name] = result

    for name, lab in labs.items():
        add(f"plots/{name}-steps", draw_steps(lab))
        for sweep in sweeps(lab):
            figures.append(draw_sweep(lab, sweep))
    add("plots/roofline", draw_roofline(labs))
    return figures, skipped
