# SPDX-License-Identifier: MIT
"""The plots of measured results: what each plot shows (pure Python, tested by
tools/docs/tests/ without matplotlib), and its drawing (matplotlib, SVG). tools/docs/figures.py
calls `plots(data_dir)`.

Everything is driven by the results files (common/results.cpp, read by coursemodel.results), so
that a new step, a new variant sweep or a new lab appears without a change here:
- every lab gets a steps plot: each step's share of *its own* roof. A step's roof is the one its
  table printed: its "perf" record's "roof" where the file has one, else the value that the
  record's throughput and "% roof" imply; steps with different roofs are drawn in separate
  panels, each under the name and value of its roof. A reference that a step beats by more than
  10% (a given baseline, not a limit) is called a baseline;
- every step whose timed variants sweep a number ("offset 7", "256 threads per block") with at
  least three values gets a sweep plot; steps of one lab that sweep the same thing share one;
- the roofline draws the memory and FP32 roofs measured by the labs whose lab.json "roof" says
  they supply them, and places every step of the labs that do floating-point work, from the
  intensities of their catalogues (so a new step of such a lab appears by itself); every other
  step is listed with the reason it is left out (a lab whose "roof" is of another kind, such as
  the tensor cores', is left off whole).
No label is cut short (a long one wraps), and none lies on another label, a line or a point: the
bars' values move inside their bars where they would lie on the 100% line, the roofline's step ids
are placed clear of each other, of the points and of the roof. tools/docs/browser-check/ measures
the drawn result in a browser.
"""
from __future__ import annotations

import functools
import io
import math
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the course's root: its coursemodel package
from coursemodel import labs as course_labs, results  # noqa: E402

# Okabe and Ito's palette (distinguishable with every common colour-vision deficiency) without its
# black and its yellow (black is for roofs, yellow is faint on white), then two dark colours of
# Paul Tol's; each series also has its own marker, so that no plot rests on colour alone.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#332288", "#882255"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
ROOF_COLOUR = "#000000"
MODEL_COLOUR = "#7f7f7f"
NOISE = 1.10  # a measured roof can be beaten by noise; beyond this it is a baseline, not a roof


# --- the results files ----------------------------------------------------------------------------


def load_results(path: Path) -> results.Run | None:
    try:
        return results.load_run(path)
    except results.ResultsError:
        return None


def load_all(data_dir: Path) -> tuple[dict[str, results.Run], dict[str, str]]:
    labs: dict[str, results.Run] = {}
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


def section_of(step: results.Step) -> int | None:
    """The sheet section of a step: its "section", else the number its id starts with."""
    if step.section > 0:
        return step.section
    match = re.match(r"\d+", step.id)
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


def roof_label(name: str | None) -> str | None:
    """A roof's name as a plot shows it: what the roof is, without how it was timed (a roof timed
    beside the steps names its spread there: "cuBLAS SGEMM FP32 (no TF32), timed beside the steps:
    ... median", which the table prints and a plot's label has no room for)."""
    return name.split(", timed beside the steps")[0] if name else name


def step_roof(lab: results.Run, perf: results.Perf) -> tuple[str | None, float, str] | None:
    """(name or None, value, unit) of the roof a perf record was measured against: the lab's roof
    where the record's throughput and "% roof" imply it, else the value they imply."""
    percent, throughput = perf.percent_of_roof, perf.throughput
    if not percent or not throughput or percent <= 0 or throughput <= 0:
        return None
    value = throughput * 100.0 / percent
    roof = lab.roof
    if roof and roof.value and roof.unit == perf.unit and abs(value / roof.value - 1) < 0.002:
        return roof_label(roof.name), roof.value, roof.unit
    return None, value, perf.unit


def steps_panels(lab: results.Run) -> tuple[list[Panel], dict[str, str]]:
    """The steps plot's panels (one per roof, in the order of their first step) and the steps
    left out with the reason."""
    panels: list[Panel] = []
    left_out: dict[str, str] = {}
    for step in lab.steps:
        step_id = step.id
        perf = step.perf
        if step_id == "0":
            left_out[step_id] = "the CPU reference"
            continue
        if not perf or not perf.passed:
            left_out[step_id] = f"not timed: {perf.status if perf else 'no timing'}"
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
        throughput = perf.throughput
        panel.bars.append(Bar(step_id, step.name, throughput, perf.unit,
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


FAMILY_STEPS = 3  # steps sharing a knob that one sweep plot draws together (sweeps below)


@dataclass
class Sweep:
    lab: str
    axis: str
    unit: str
    series: list[Series]
    roof_name: str


def sweeps(lab: results.Run) -> list[Sweep]:
    by_axis: dict[tuple[str, str], list[Series]] = {}
    roof_names: dict[tuple[str, str], str] = {}
    for step in lab.steps:
        step_id = step.id
        records = step.passed_variants()
        points, roofs, axis, unit = [], [], None, None
        for record in records:
            parsed = variant_axis(record.variant)
            if not parsed or (axis is not None and parsed[0] != axis):
                continue
            axis, unit = parsed[0], record.unit
            points.append((parsed[1], record.throughput))
            roof = step_roof(lab, record)
            if roof:
                roofs.append(roof)
        if len(points) < 3:
            continue
        roofs.sort(key=lambda r: r[1])
        roof = roofs[len(roofs) // 2] if roofs else None
        key = (axis, unit)
        by_axis.setdefault(key, []).append(Series(step_id, step.name, sorted(points),
                                                  roof[1] if roof else None))
        if roof:
            roof_names.setdefault(key, roof[0] or "the roof printed in its table")
    # Steps that share a knob are drawn together where they form a family (three steps or more,
    # as lab 06's block sizes); two steps with the same knob get a plot each, so that a plot's
    # name does not change where one of them has no variants (an open step on the students' site).
    out = []
    for (axis, unit), series in by_axis.items():
        groups = [series] if len(series) >= FAMILY_STEPS else [[one] for one in series]
        out += [Sweep(lab.lab, axis, unit, group, roof_names.get((axis, unit), "")) for group in groups]
    return out


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def sweep_name(sweep: Sweep) -> str:
    if len(sweep.series) == 1:
        return f"plots/{sweep.lab}-step-{sweep.series[0].step_id}-{slug(sweep.axis)}"
    return f"plots/{sweep.lab}-{slug(sweep.axis)}"


# A model drawn beside a sweep, where a lab's chapter explains one. Which step has which model, and
# its parameters, is in the lab's step catalogue (lab.json "steps"[].sweep_model); here only the
# hardware's part: a 32-byte sector and 32 banks of 4 bytes.
SECTOR_BYTES = 32
BANKS = 32


def _sector_model(params: dict) -> tuple[str, Callable[[float, float, list], float]]:
    """Whole 32-byte sectors: `bytes_written` per element, and reads of `bytes_read` at stride s
    fetching min(s, 32 / bytes_read) times their bytes."""
    written, read = params["bytes_written"], params["bytes_read"]
    per_sector = SECTOR_BYTES // read
    return (f"sector model: {written} B written + {read} min(s, {per_sector}) B read per element",
            lambda s, roof, points: roof * (written + read) / (written + read * min(s, per_sector)))


def _bank_model(params: dict) -> tuple[str, Callable[[float, float, list], float]]:
    """A stride s of 4-byte words: gcd(s, banks)-way conflicts, from the fastest point measured."""
    banks = params.get("banks", BANKS)
    return (f"bank model: fastest / gcd(s, {banks})",
            lambda s, roof, points: max(y for _, y in points) / math.gcd(int(s), banks) if s
            else max(y for _, y in points))


MODEL_KINDS = {"sectors": _sector_model, "banks": _bank_model}


def sweep_model(lab_name: str, step_id: str) -> tuple[str, Callable[[float, float, list], float], str] | None:
    """(label, f(x, roof, points), caption) of the model the lab's catalogue gives the step, or None."""
    step = _catalogue_step(lab_name, step_id)
    params = step.sweep_model if step else None
    if not params:
        return None
    label, formula = MODEL_KINDS[params["kind"]](params)
    return label, formula, " " + params.get("caption", "")


# --- the roofline ---------------------------------------------------------------------------------
# Arithmetic intensity (flops per byte of compulsory DRAM traffic) of the steps whose work is
# floating-point arithmetic: each lab's catalogue gives it per step (lab.json "steps"[].roofline:
# flops and bytes per unit of work, for the lab's problem size). For GB/s tables the intensity
# converts the counted bytes into flops; for GFLOP/s tables the throughput is already flops and the
# intensity places the point. A lab none of whose steps has one does no floating-point work.
COURSE_ROOT = Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=None)
def _catalogue(root: Path = COURSE_ROOT) -> dict[str, course_labs.Lab]:
    return {lab.name: lab for lab in course_labs.discover(root)}


def _catalogue_step(lab_name: str, step_id: str):
    lab = _catalogue().get(lab_name)
    return lab.step(step_id) if lab else None


def roofline_intensities(root: Path = COURSE_ROOT) -> dict[str, dict[str, float]]:
    """lab -> step id -> flops per byte, for the labs whose catalogue gives any."""
    out: dict[str, dict[str, float]] = {}
    for name, lab in _catalogue(root).items():
        steps = {step.id: step.intensity() for step in lab.steps if step.roofline}
        if steps:
            out[name] = steps
    return out


# The roofs this plot draws, each from the measured roof of a lab whose lab.json "roof" has that
# kind and "roofline_roof": true (coursemodel.labs.ROOFLINE_ROOFS): kind -> (unit, default name).
ROOFS = {"memory": ("GB/s", "memcpy"), "fp32": ("GFLOP/s", "FP32 FMA")}
# Why the steps of a lab whose roof is of another kind are left off.
OTHER_ROOF_KINDS = {"tensor": "its flops run on the tensor cores, whose roof lies far above this plot's FP32 roof "
                              "(see the roofline page)"}


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


def roofline_roof(labs: dict[str, results.Run], kind: str,
                  root: Path = COURSE_ROOT) -> tuple[float, str, str] | str:
    """(value, name, device) of the roofline's roof of `kind` ("memory" or "fp32"): the measured roof
    of the first lab, in the course's order, whose lab.json "roof" is of that kind with
    "roofline_roof": true and whose results hold a roof in the kind's unit; else what is missing."""
    unit, default_name = ROOFS[kind]
    suppliers = [name for name, lab in _catalogue(root).items()
                 if lab.roof and lab.roof.kind == kind and lab.roof.roofline_roof]
    for name in suppliers:
        lab = labs.get(name)
        if lab and lab.roof and lab.roof.unit == unit and lab.roof.value:
            return lab.roof.value, roof_label(lab.roof.name) or default_name, lab.device
    where = ", ".join(suppliers) or f'no lab.json has "roof": {{"kind": "{kind}", "roofline_roof": true}}'
    return f"{'a memory' if kind == 'memory' else 'the FP32'} roof ({where})"


def roofline(labs: dict[str, results.Run], root: Path = COURSE_ROOT) -> Roofline | str:
    memory = roofline_roof(labs, "memory", root)
    compute = roofline_roof(labs, "fp32", root)
    if isinstance(memory, str) or isinstance(compute, str):
        return "the roofline needs " + " and ".join(what for what in (memory, compute) if isinstance(what, str))
    points: list[Point] = []
    left_out: dict[str, dict[str, str]] = {}
    intensities = roofline_intensities(root)
    catalogue = _catalogue(root)
    for name, lab in labs.items():
        rules = intensities.get(name)
        kind = catalogue[name].roof.kind if name in catalogue and catalogue[name].roof else None
        for step in lab.steps:
            step_id = step.id
            why = None
            perf = step.perf or results.Perf("")
            intensity = None
            if kind and kind not in ROOFS:
                why = OTHER_ROOF_KINDS.get(kind, f"its lab's roof ({kind}) is neither of this plot's roofs")
            elif rules is None:
                why = "its lab does no floating-point work worth the name (see the roofline page)"
            elif step_id == "0":
                why = "the CPU reference"
            elif not perf.passed or not perf.throughput:
                why = f"not timed: {perf.status or 'no timing'}"
            elif perf.unit not in ("GB/s", "GFLOP/s"):
                why = f"its unit, {perf.unit}, counts no flops"
            else:
                intensity = rules.get(step_id)
                if intensity is None:
                    why = "no floating-point work (a copy)"
            if why:
                left_out.setdefault(name, {})[step_id] = why
                continue
            value = perf.throughput
            points.append(Point(name, step_id, intensity, value * intensity if perf.unit == "GB/s" else value))
    bandwidth, memory_name, device = memory
    peak, peak_name, _ = compute
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
    # The labels stay text in the SVG (svg.fonttype "none"): the reader's browser draws them, with
    # DejaVu Sans where it has it, else with a sans-serif font of about the same widths.
    return matplotlib.rc_context({
        "font.family": "sans-serif", "font.sans-serif": ["DejaVu Sans", "Verdana", "Arial"], "font.size": 10,
        "axes.titlesize": 10, "axes.titlelocation": "left",
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


def _wrap(text: str, width: int) -> str:
    """A label on as many lines of at most `width` characters as it needs: never cut short."""
    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=False)) or text


def _renderer(figure):
    """A renderer to measure text with before the figure is saved (Agg: the same fonts, the same
    metrics as the SVG's text)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    return FigureCanvasAgg(figure).get_renderer()


def _text_size(figure, renderer, text: str, size: float) -> tuple[float, float]:
    """The width and height of `text` at `size` points, in display pixels."""
    probe = figure.text(0, 0, text, fontsize=size)
    extent = probe.get_window_extent(renderer)
    probe.remove()
    return extent.width, extent.height


def _contrast(colour: str, alpha: float = 1.0) -> str:
    """Black or white, whichever reads better on `colour` (drawn with `alpha` over white)."""
    from matplotlib.colors import to_rgb

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (alpha * c + (1 - alpha) for c in to_rgb(colour))
    luminance = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
    return "#ffffff" if 1.05 / (luminance + 0.05) > (luminance + 0.05) / 0.05 else "#000000"


def steps_title(lab: results.Run, panels: list[Panel]) -> str:
    """The steps plot's title: the one roof by its name, or "its own roof" where the steps use several."""
    if len(panels) > 1:
        return f"{lab.lab}: each step against its own roof"
    reference = panels[0].reference
    if reference.name.startswith("the one printed"):  # no name: the value its table printed
        return f"{lab.lab}: each step against the {reference.kind} printed in its table"
    return f"{lab.lab}: each step against {'the baseline ' if reference.kind == 'baseline' else ''}{reference.name}"


def steps_alt(lab: results.Run, panels: list[Panel]) -> str:
    if len(panels) > 1:
        return f"Each step of lab {lab.lab} as a percentage of its own roof"
    return f"Each step of lab {lab.lab} as a percentage of its {panels[0].reference.kind}, {panels[0].reference.name}"


BAR_LABEL_GAP = 4  # points between a bar's end and its value label


def _bar_label(ax, renderer, bar: Bar, y: float, colour: str, alpha: float) -> None:
    """A bar's value, beside its end; where it would lie on the dashed 100% line, inside the bar
    (right-aligned, in black or white, whichever reads better on the bar's colour), or, where the
    bar is too short for it, just past the line."""
    text = f"{bar.percent:.1f}%  ({plain(bar.throughput)} {bar.unit})"
    scale = ax.figure.dpi / 72.0  # display pixels per point
    width = _text_size(ax.figure, renderer, text, 8)[0]
    to_x = lambda value: ax.transData.transform((value, y))[0]  # noqa: E731
    end, line, margin = to_x(bar.percent), to_x(100.0), 3 * scale
    left = end + BAR_LABEL_GAP * scale
    style = {"va": "center", "fontsize": 8, "textcoords": "offset points"}
    if left > line + margin or left + width < line - margin:
        ax.annotate(text, (bar.percent, y), xytext=(BAR_LABEL_GAP, 0), ha="left", **style)
    elif end - to_x(0) >= width + 2 * BAR_LABEL_GAP * scale:
        ax.annotate(text, (bar.percent, y), xytext=(-BAR_LABEL_GAP, 0), ha="right", color=_contrast(colour, alpha),
                    **style)
    else:
        ax.annotate(text, (100.0, y), xytext=(BAR_LABEL_GAP, 0), ha="left", **style)


def draw_steps(lab: results.Run) -> Plot | str:
    panels, left_out = steps_panels(lab)
    if not panels:
        return f"no timed step passed in {lab.lab}'s results"
    with _style():
        rows = sum(len(p.bars) for p in panels)
        figure = _figure(8.0, 1.2 + 0.4 * rows + 0.75 * len(panels))
        renderer = _renderer(figure)
        grid = figure.add_gridspec(len(panels), 1, height_ratios=[len(p.bars) + 1.2 for p in panels],
                                   left=0.36, right=0.97, top=1 - 0.75 / figure.get_figheight(),
                                   bottom=0.5 / figure.get_figheight(), hspace=0.9)
        alpha = 0.85
        for index, panel in enumerate(panels):
            ax = figure.add_subplot(grid[index])
            bars = panel.bars
            ys = list(range(len(bars)))[::-1]
            colour = PALETTE[index % len(PALETTE)]
            ax.barh(ys, [b.percent for b in bars], height=0.62, color=colour, alpha=alpha)
            high = max(135.0, max(b.percent for b in bars) * 1.5)
            ax.set_xlim(0, high)
            ax.set_ylim(-0.6, len(bars) - 0.4)
            ax.axvline(100, color=ROOF_COLOUR, linestyle="--", linewidth=1.1)
            ax.set_yticks(ys, [f"{b.step_id}  " + _wrap(b.name, 34) for b in bars], fontsize=8.5)
            ax.tick_params(axis="y", length=0)
            ax.grid(axis="y", visible=False)
            for y, bar in zip(ys, bars):
                _bar_label(ax, renderer, bar, y, colour, alpha)
            ax.set_title(panel.reference.title(), fontsize=9)
            ax.set_xlabel(f"% of this {panel.reference.kind} (dashed line: 100%)", fontsize=8.5)
        height = figure.get_figheight()
        figure.suptitle(steps_title(lab, panels), x=0.02, y=1 - 0.12 / height, ha="left", va="top",
                        fontsize=10.5, fontweight="bold")
        figure.text(0.02, 1 - 0.42 / height, f"measured on the {short_device(lab.device)}", va="top", fontsize=8.5,
                    color="#555555")
        svg = _svg(figure)
    several = len(panels) > 1
    caption = (f"Every timed step of lab {lab.lab} that passed, as a share of the roof its table printed "
               f"(measured in the same run on the {short_device(lab.device)}; the table's \"% roof\" column)"
               + (": its steps use different roofs, so each panel has its own." if several else "."))
    if any(p.reference.kind == "baseline" for p in panels):
        caption += " A baseline is a given version the steps are meant to beat, not a limit."
    data = {"panels": [{"reference": vars(p.reference), "bars": [vars(b) for b in p.bars]} for p in panels],
            "left_out": left_out}
    return Plot(f"plots/{lab.lab}-steps", steps_alt(lab, panels), caption, svg, data)


def draw_sweep(lab: results.Run, sweep: Sweep) -> Plot:
    model = sweep_model(lab.lab, sweep.series[0].step_id) if len(sweep.series) == 1 else None
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
            label = _wrap(f"step {series.step_id}: {series.name}", 30) if len(sweep.series) > 1 else "measured"
            ax.plot(px, py, marker=MARKERS[index % len(MARKERS)], markersize=4, linewidth=1.6,
                    color=PALETTE[index % len(PALETTE)], label=label)
        for roof in roofs:
            ax.axhline(roof, color=ROOF_COLOUR, linestyle="--", linewidth=1.1)
        if roofs:
            ax.plot([], [], color=ROOF_COLOUR, linestyle="--", linewidth=1.1,
                    label=_wrap(f"roof: {sweep.roof_name}, {plain(roofs[-1])} {sweep.unit}", 30)
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
        title = (f"{lab.lab}, step {first.step_id}: {sweep.unit} against {sweep.axis}"
                 if len(sweep.series) == 1 else f"{lab.lab}: {sweep.unit} of each step against {sweep.axis}")
        figure.suptitle(title, x=0.02, ha="left", fontsize=10.5, fontweight="bold")
        measured = f"measured on the {short_device(lab.device)}"
        figure.text(0.02, 0.905, f"{first.name}, {measured}" if len(sweep.series) == 1 else measured, fontsize=8.5,
                    color="#555555")
        svg = _svg(figure)
    steps = ", ".join(s.step_id for s in sweep.series)
    caption = (f"The timed variants of step{'s' if len(sweep.series) > 1 else ''} {steps} of lab {lab.lab}: "
               f"{sweep.unit} against {sweep.axis}, with the roof measured in the same run.")
    if model:
        caption += model[2]
    data = {"axis": sweep.axis, "unit": sweep.unit,
            "series": [{"step": s.step_id, "points": s.points, "roof": s.roof} for s in sweep.series]}
    return Plot(sweep_name(sweep), f"{sweep.unit} of lab {lab.lab}, step {steps}, against {sweep.axis}", caption,
                svg, data)


# The roofline's labels, placed in display pixels (y upwards): each lab's step ids beside its
# points, clear of every other label, marker, leader line and of the roof.
MARKER_AREA = 26  # points squared (the scatter's s)
LABEL_SIZE = 8.5  # points
LABEL_OFFSET = 7  # points between a point and its label


@dataclass
class _Box:
    left: float
    bottom: float
    right: float
    top: float

    def hits(self, other: "_Box", margin: float = 0.0) -> bool:
        return (self.left - margin < other.right and other.left < self.right + margin
                and self.bottom - margin < other.top and other.bottom < self.top + margin)

    def holds(self, x: float, y: float, margin: float = 0.0) -> bool:
        return self.left - margin < x < self.right + margin and self.bottom - margin < y < self.top + margin


def _segment_hits(a: tuple[float, float], b: tuple[float, float], box: _Box, margin: float) -> bool:
    """Whether the segment a-b passes through `box` (grown by `margin`), sampled every half pixel."""
    steps = max(1, int(math.hypot(b[0] - a[0], b[1] - a[1]) * 2))
    return any(box.holds(a[0] + (b[0] - a[0]) * k / steps, a[1] + (b[1] - a[1]) * k / steps, margin)
               for k in range(steps + 1))


def _crosses(segment, polyline: list[tuple[float, float]]) -> bool:
    """Whether a segment crosses a polyline (both in display pixels)."""
    (ax_, ay), (bx, by) = segment

    def side(px, py, qx, qy, rx, ry):
        return (qx - px) * (ry - py) - (qy - py) * (rx - px)

    for (cx, cy), (dx, dy) in zip(polyline, polyline[1:]):
        if (side(ax_, ay, bx, by, cx, cy) * side(ax_, ay, bx, by, dx, dy) < 0
                and side(cx, cy, dx, dy, ax_, ay) * side(cx, cy, dx, dy, bx, by) < 0):
            return True
    return False


def _dodged(ax, points: list[Point], labs: list[str], scale: float) -> dict[tuple[str, str], tuple[float, float]]:
    """Each point's place in display pixels. Where several labs have points at one intensity, each
    lab's points move sideways by a marker's width, so that no point hides another lab's."""
    place = {(p.lab, p.step_id): tuple(ax.transData.transform((p.intensity, p.gflops))) for p in points}
    columns: dict[float, list[str]] = {}
    for p in points:
        x = round(place[(p.lab, p.step_id)][0])
        for known in columns:
            if abs(known - x) < 2:
                x = known
        if p.lab not in columns.setdefault(x, []):
            columns[x].append(p.lab)
    width = math.sqrt(MARKER_AREA) * scale + 3
    for x, column in columns.items():
        column.sort(key=labs.index)
        for p in points:
            if p.lab in column and abs(place[(p.lab, p.step_id)][0] - x) < 2:
                px, py = place[(p.lab, p.step_id)]
                place[(p.lab, p.step_id)] = (px + (column.index(p.lab) - (len(column) - 1) / 2) * width, py)
    return place


def _place_labels(ax, renderer, points: list[Point], labs: list[str],
                  place: dict[tuple[str, str], tuple[float, float]], roof: list[tuple[float, float]],
                  fixed: list[_Box]) -> None:
    """Labels the points, one lab after the other, each label at the first place that clashes with
    nothing drawn or placed before it (`fixed`: texts already drawn): beside its point, else higher
    or lower with a leader line. The browser check (tools/docs/browser-check/pictures.mjs) measures
    the result as drawn."""
    scale = ax.figure.dpi / 72.0
    frame = ax.get_window_extent(renderer)
    inside = _Box(frame.x0 + 2, frame.y0 + 2, frame.x1 - 2, frame.y1 - 2)
    marker = math.sqrt(MARKER_AREA) * scale * 0.6 + 1  # half a marker's width, and a pixel
    markers = {key: _Box(x - marker, y - marker, x + marker, y + marker) for key, (x, y) in place.items()}
    roof_margin = 1.0 * scale + 2  # half the roof's width, and two pixels
    taken: list[_Box] = list(fixed)
    leaders: list[tuple[tuple[float, float], tuple[float, float]]] = []

    # Points of a lab closer than 0.4 of a label's height share a label ("1, 2").
    together = _text_size(ax.figure, renderer, "0", LABEL_SIZE)[1] * 0.4
    groups: list[tuple[str, list[str], tuple[float, float]]] = []
    for lab in labs:
        members = sorted((p for p in points if p.lab == lab), key=lambda p: -place[(lab, p.step_id)][1])
        for p in members:
            x, y = place[(lab, p.step_id)]
            same = next((g for g in groups if g[0] == lab and abs(g[2][0] - x) < 1 and abs(g[2][1] - y) < together),
                        None)
            if same:
                same[1].append(p.step_id)
            else:
                groups.append((lab, [p.step_id], (x, y)))

    for lab, ids, (x, y) in groups:
        ids.sort(key=lambda i: (len(i), i))
        text = ", ".join(ids)
        width, height = _text_size(ax.figure, renderer, text, LABEL_SIZE)
        gap = LABEL_OFFSET * scale
        own = {(lab, i) for i in ids}
        # Beside the point first, then higher or lower with a leader line, further out the higher.
        candidates = [(side, sign * rise * height * 0.8, reach) for rise in range(0, 9)
                      for reach in ((0.0,) if rise == 0 else (0.0, 1.2)) for sign in ((1,) if rise == 0 else (-1, 1))
                      for side in (1, -1)]
        best = None
        for side, dy, reach in candidates:
            dx = gap + reach * abs(dy)
            left = x + dx if side > 0 else x - dx - width
            box = _Box(left, y + dy - height / 2, left + width, y + dy + height / 2)
            # A leader runs from the point towards the label's centre, up to the label's box.
            leader = ((x, y), (left + width / 2, y + dy)) if abs(dy) > 2 or reach else None
            # What a reader would see as a collision counts ten times a leader line across a marker.
            clashes = 0 if inside.holds(box.left, box.bottom) and inside.holds(box.right, box.top) else 10
            clashes += 10 * sum(box.hits(other, 1.0) for other in taken)
            clashes += 10 * sum(box.hits(m, 1.0) for m in markers.values())
            clashes += 10 * sum(_segment_hits(a, b, box, roof_margin) for a, b in zip(roof, roof[1:]))
            clashes += 10 * sum(_segment_hits(a, b, box, 1.5) for a, b in leaders)
            if leader:
                clashes += 10 * sum(_segment_hits(*leader, other, 1.0) for other in taken)
                clashes += sum(_segment_hits(*leader, m, 0.0) for key, m in markers.items() if key not in own)
                clashes += 2 * _crosses(leader, roof) + 2 * sum(_crosses(leader, list(other)) for other in leaders)
            if best is None or clashes < best[0]:
                best = (clashes, dx * side, dy, box, leader)
            if clashes == 0:
                break
        _, dx, dy, box, leader = best
        taken.append(box)
        if leader:
            leaders.append(leader)
        colour = PALETTE[labs.index(lab) % len(PALETTE)]
        point = ax.transData.inverted().transform((x, y))
        ax.annotate(text, tuple(point), xytext=(dx / scale, dy / scale), textcoords="offset points",
                    ha="left" if dx > 0 else "right", va="center", fontsize=LABEL_SIZE, color=colour,
                    arrowprops={"arrowstyle": "-", "color": colour, "linewidth": 0.5, "shrinkA": 0,
                                "shrinkB": 3} if leader else None)


def draw_roofline(labs: dict[str, results.Run]) -> Plot | str:
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
        renderer = _renderer(figure)
        scale = figure.dpi / 72.0
        ax = figure.add_axes([0.13, 0.11, 0.6, 0.72])
        ax.set_xscale("log")
        ax.set_yscale("log")
        low_x, high_x = min(xs) / 2.5, max(xs) * 4
        low_y, high_y = min(ys) / 2.5, line.peak * 2.2
        ax.set_xlim(low_x, high_x)
        ax.set_ylim(low_y, high_y)
        start = max(low_x, low_y / line.bandwidth)
        roof = [(start, start * line.bandwidth), (ridge, line.peak), (high_x, line.peak)]
        ax.plot(*zip(*roof), color=ROOF_COLOUR, linewidth=2, label="roof")
        ridge_label = ax.annotate(f"ridge: {plain(ridge, 3)} flop/B", (ridge, line.peak), xytext=(6, 6),
                                  textcoords="offset points", fontsize=8)
        place = _dodged(ax, line.points, names, scale)
        to_data = ax.transData.inverted().transform
        for index, name in enumerate(names):
            drawn = [to_data(place[(p.lab, p.step_id)]) for p in line.points if p.lab == name]
            ax.scatter([d[0] for d in drawn], [d[1] for d in drawn], s=MARKER_AREA, zorder=3,
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
        ridge_box = ridge_label.get_window_extent(renderer)
        _place_labels(ax, renderer, line.points, names, place,
                      [tuple(ax.transData.transform(corner)) for corner in roof],
                      [_Box(ridge_box.x0, ridge_box.y0, ridge_box.x1, ridge_box.y1)])
        svg = _svg(figure)
    data = {"bandwidth": line.bandwidth, "peak": line.peak, "points": [vars(p) for p in line.points],
            "left_out": line.left_out}
    return Plot("plots/roofline", "Roofline of the measured memory bandwidth and FP32 rate with every step as a point",
                f"The roof is min(FP32 rate, intensity x bandwidth), both measured on the "
                f"{short_device(line.device)}. A point's height is the step's measured rate; its distance below the "
                "roof is what the step leaves on the table. Every timed step of the labs with floating-point work "
                "is a point, labelled with its step id; where two labs have points at one intensity, their points "
                "stand a marker's width apart, either side of it.", svg, data)


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
