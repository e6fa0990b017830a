// SPDX-License-Identifier: MIT
// What a reader sees as broken in a picture of the site (a plot or a diagram, an SVG file opened
// on its own in the browser, so that its elements can be measured): `pictureProblems` runs in
// the SVG document and returns one line per problem. Everything is measured as drawn, in CSS
// pixels: the boxes of the labels (<text>), of the markers (<use>, <circle>) and the strokes of
// the lines, sampled along their length.
// - a label cut short with an ellipsis ("step 1: interleaved, tid % (2s) (dive…");
// - a label that runs past the picture's edge;
// - two labels on top of each other;
// - a label on a line (a roof, an axis, a curve, another label's leader line) or on a marker;
// - a marker hidden under a marker of another series (two points that the reader sees as one).
// Light lines (grid lines) may run under a label; a label's own leader line may touch it.

export function pictureProblems() {
  const found = [];
  const svg = document.documentElement;
  const frame = svg.getBoundingClientRect();
  const describe = (text) => JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
  const drawn = (element) => {
    if (element.closest("defs, clipPath, marker, mask, symbol, title, desc, metadata")) return false;
    const style = getComputedStyle(element);
    return style.display !== "none" && style.visibility !== "hidden" && Number(style.opacity) > 0;
  };
  const rgb = (colour) => (/rgba?\(([^)]+)\)/.exec(colour) || [null, ""])[1].split(",").map(Number);
  // A label's ink: the box its glyphs cover, measured with the label's own font on a canvas
  // (what a reader sees; the label's element box also holds the empty space above capitals and
  // below the baseline). A rotated label keeps its element box.
  const pen = document.createElementNS("http://www.w3.org/1999/xhtml", "canvas").getContext("2d");
  const labelBox = (element) => {
    const box = element.getBoundingClientRect();
    const matrix = element.getScreenCTM();
    const x = element.x.baseVal.length ? element.x.baseVal[0].value : 0;
    const y = element.y.baseVal.length ? element.y.baseVal[0].value : 0;
    if (!matrix || Math.abs(matrix.b) > 1e-6 || Math.abs(matrix.c) > 1e-6) return box;
    const style = getComputedStyle(element);
    // Measured at 100 px, then scaled: the canvas rounds a small font's extents to whole pixels.
    pen.font = `${style.fontStyle} ${style.fontWeight} 100px ${style.fontFamily}`;
    pen.textAlign = { middle: "center", end: "right" }[style.textAnchor] || "left";
    const ink = pen.measureText(element.textContent);
    const anchor = new DOMPoint(x, y).matrixTransform(matrix);
    const scale = (Math.abs(matrix.a) * parseFloat(style.fontSize)) / 100;
    return { left: anchor.x - ink.actualBoundingBoxLeft * scale, right: anchor.x + ink.actualBoundingBoxRight * scale,
      top: anchor.y - ink.actualBoundingBoxAscent * scale, bottom: anchor.y + ink.actualBoundingBoxDescent * scale };
  };
  const overlap = (a, b) => Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)) *
    Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  const grow = (box, by) => ({ left: box.left - by, right: box.right + by, top: box.top - by, bottom: box.bottom + by });
  const area = (box) => (box.right - box.left) * (box.bottom - box.top);

  const labels = [...document.querySelectorAll("text")].filter((t) => drawn(t) && t.textContent.trim())
    .map((element) => ({ element, text: element.textContent.trim(), box: labelBox(element) }));

  for (const label of labels) {
    if (/\S(?:…|\.\.\.)$/.test(label.text)) found.push(`a label cut short with an ellipsis: ${describe(label.text)}`);
    const box = label.element.getBoundingClientRect();
    const outside = Math.max(frame.left - box.left, box.right - frame.right, frame.top - box.top,
      box.bottom - frame.bottom);
    if (outside > 1) found.push(`a label runs ${Math.round(outside)} px past the picture's edge: ${describe(label.text)}`);
  }
  for (let i = 0; i < labels.length; i += 1) {
    for (let j = i + 1; j < labels.length; j += 1) {
      if (overlap(labels[i].box, labels[j].box) > 0) {
        found.push(`two labels on top of each other: ${describe(labels[i].text)} and ${describe(labels[j].text)}`);
      }
    }
  }

  // Markers: the points of a scatter or a curve (not the axes' tick marks), by series.
  const markers = [...document.querySelectorAll("use, circle")]
    .filter((m) => drawn(m) && !m.closest("[id^='xtick'], [id^='ytick']"))
    .map((element) => ({ element, series: element.parentElement, box: element.getBoundingClientRect() }))
    .filter((m) => m.box.width > 0 && m.box.height > 0);
  for (const label of labels) {
    const hit = markers.find((m) => overlap(grow(label.box, 0.5), m.box) > 0);
    if (hit) found.push(`a label on a marker: ${describe(label.text)}`);
  }
  // A scatter's points may not hide one another; a curve's may (its line shows the series).
  const stroked = (shape) => shape.tagName === "path" && getComputedStyle(shape).stroke !== "none";
  const onCurve = (m) => [...(m.series.parentElement?.children || [])].some(stroked);
  const hidden = new Set();
  for (let i = 0; i < markers.length; i += 1) {
    for (let j = i + 1; j < markers.length; j += 1) {
      const [under, over] = [markers[i], markers[j]]; // later in the document: drawn on top
      if (under.series === over.series || hidden.has(under.element) || onCurve(under) || onCurve(over)) continue;
      if (overlap(under.box, over.box) > 0.5 * Math.min(area(under.box), area(over.box))) {
        hidden.add(under.element);
        const colour = (m) => getComputedStyle(m.element).fill;
        found.push(`a point hidden under a point of another series (${colour(under)} under ${colour(over)}) at ` +
          `${Math.round(under.box.left - frame.left)}, ${Math.round(under.box.top - frame.top)} px`);
      }
    }
  }

  // Lines: every dark stroke (light ones, the grid, may run under a label), sampled every pixel.
  const lines = [...document.querySelectorAll("path, line, polyline, polygon, rect")].filter((shape) => {
    if (!drawn(shape) || shape.closest("[id^='xtick'], [id^='ytick']")) return false;
    const style = getComputedStyle(shape);
    if (style.stroke === "none" || Number(style.strokeOpacity) === 0 || parseFloat(style.strokeWidth) === 0) return false;
    const [r, g, b] = rgb(style.stroke);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b < 180; // darker than the light grey of the grid
  });
  // A label's own leader line: an annotation's arrow, drawn just before the label's text.
  const leaderOf = (label) => {
    const group = label.element.parentElement;
    const before = group && group.previousElementSibling;
    return before && /^patch_/.test(before.getAttribute("id") || "") ? before : null;
  };
  for (const label of labels) {
    const own = leaderOf(label);
    for (const line of lines) {
      if (own && own.contains(line)) continue;
      if (line.closest("text")) continue;
      const matrix = line.getScreenCTM();
      if (!matrix || typeof line.getTotalLength !== "function") continue;
      const half = (parseFloat(getComputedStyle(line).strokeWidth) || 1) * Math.abs(matrix.a) / 2;
      const box = grow(label.box, half + 1); // a pixel of white between a label and a line
      const lineBox = line.getBoundingClientRect();
      if (overlap(grow(lineBox, half + 1), box) === 0 && lineBox.width + lineBox.height > 0) continue;
      const length = line.getTotalLength();
      const steps = Math.min(4000, Math.ceil(length * Math.abs(matrix.a)) + 1);
      for (let k = 0; k <= steps; k += 1) {
        const point = line.getPointAtLength((length * k) / steps).matrixTransform(matrix);
        if (point.x > box.left && point.x < box.right && point.y > box.top && point.y < box.bottom) {
          found.push(`a label on a line (${getComputedStyle(line).stroke}): ${describe(label.text)}`);
          break;
        }
      }
    }
  }
  return found;
}
