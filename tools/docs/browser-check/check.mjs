// SPDX-License-Identifier: MIT
// Opens every page of the built course site in headless Chromium at 1280 x 900 and checks what a
// reader would notice:
// - console errors and failed requests; images (SVG included) that do not load or have no size;
//   links and anchors inside the site that lead nowhere; a site search that does not find what it
//   should;
// - Markdown left unrendered: a backtick or "**" in the text outside code (a hint whose Markdown
//   was not processed), a "Questions" line that is not followed by a list, or that runs its
//   questions into one paragraph;
// - formulas left raw: a delimiter (\( \) \[ \] $$ $...$) or a power written as text (2^28) outside
//   code, a formula KaTeX did not render, or one it could not parse;
// - a step table of harness output left as preformatted text; an element wider than the window,
//   unless it is inside a container that scrolls it;
// - a web address in the text that is not a link; a chapter's or sheet's title without the
//   course's one separator ("04 · Tiled ...", "Lab 04 · Tiled ...");
// - a table of the text wider than the text column (cut off at its edge); a code line that wraps
//   outside a block marked to wrap, or a comment beside code that breaks onto the next line;
// - in every picture (SVG) a page shows, opened on its own and measured (pictures.mjs): a label
//   cut short with an ellipsis or running past the picture's edge, labels on top of each other, a
//   label on a line or a marker, a point hidden under another series' point.
// Before the site, the check runs on its fixtures (fixtures/: one small page or picture per kind
// of defect) and fails if it misses one, so that a rule that can no longer fail is seen.
// - the sheets' hints as the edition the site was built from has them: with SHEET_HINTS=yes (the
//   default: the course and the guided edition) at least one sheet shows a <details> hint, with
//   SHEET_HINTS=no (the standard edition, whose sheets have none) no sheet shows one.
// Usage: node check.mjs BASE_URL SITE_DIR [SCREENSHOT_DIR]   (tools/docs/docs-check.sh serves SITE_DIR
// at BASE_URL and says SHEET_HINTS). With SCREENSHOT_DIR, keeps screenshots of five pages there
// (SHOTS below: a sheet's hint and questions, or its questions alone where the sheets have no hints).
// Prints the problems, then one verdict line; exits 0 only when there are none.
import { chromium } from "playwright-core";
import { mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { pictureProblems } from "./pictures.mjs";

const [base, siteDir, shotDir] = process.argv.slice(2);
if (!base || !siteDir) {
  console.error("usage: node check.mjs BASE_URL SITE_DIR [SCREENSHOT_DIR]");
  process.exit(2);
}
const width = 1280;
const sheetHints = process.env.SHEET_HINTS || "yes";
if (!["yes", "no"].includes(sheetHints)) {
  console.error(`SHEET_HINTS=${sheetHints}: say yes (the sheets have hints) or no (the standard edition)`);
  process.exit(2);
}
const hintsOnSheets = new Map(); // each sheet's page -> how many hints it shows
// Pages to keep a picture of, each scrolled to what it shows (a selector; opened if a <details>).
const SHOTS = [
  sheetHints === "yes"
    ? { name: "1-sheet-hint-and-questions", path: "sheets/09-streams/", selector: "article details" }
    : { name: "1-sheet-questions", path: "sheets/09-streams/", selector: "article ol" },
  { name: "2-chapter-table", path: "labs/08-nbody/", selector: ".harness-output" },
  { name: "3-steps-against-their-roofs", path: "labs/10-unified-memory/", selector: "img[src*='-steps.svg']" },
  { name: "4-roofline", path: "roofline/", selector: "img[src*='roofline']" },
  { name: "5-formula", path: "labs/04-matmul-tiled/", selector: "div.arithmatex" },
];
const origin = new URL(base).origin;
// Each fixture and what the check must find in it.
const FIXTURES = [
  ["legend-cut-short.svg", /cut short with an ellipsis/],
  ["labels-on-each-other.svg", /two labels on top of each other/],
  ["label-on-the-roof.svg", /a label on a line/],
  ["point-hidden.svg", /a point hidden under a point of another series/],
  ["wide-table.html", /a table wider than the text column/],
  ["comment-breaks.html", /a code comment beside code breaks onto the next line/],
];
const fixtureDir = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
const pictures = new Map(); // each picture (SVG) of the site: its address -> the first page showing it
const searches = ["coalescing", "marching planes"];
const problems = [];
const problem = (where, what) => problems.push(`${where}: ${what}`);

// Every page of the site: each folder's index.html (MkDocs' directory URLs), the 404 page aside.
function pages(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!["assets", "search"].includes(relative(siteDir, path).split(sep)[0])) found.push(...pages(path));
    } else if (name === "index.html") {
      found.push(new URL(relative(siteDir, dir).split(sep).join("/") + (dir === siteDir ? "" : "/"), base).href);
    }
  }
  return found;
}

// A target inside the site, fetched once: its status and, for HTML, the ids it defines.
const targets = new Map();
async function target(url) {
  if (!targets.has(url)) {
    targets.set(url, (async () => {
      const response = await fetch(url);
      const type = response.headers.get("content-type") || "";
      const ids = new Set();
      if (response.ok && type.includes("text/html")) {
        const html = await response.text();
        for (const m of html.matchAll(/\s(?:id|name)="([^"]+)"/g)) ids.add(m[1]);
      }
      return { status: response.status, ids };
    })());
  }
  return targets.get(url);
}

async function checkPage(context, url) {
  const page = await context.newPage();
  const where = new URL(url).pathname;
  page.on("console", (message) => {
    if (message.type() === "error") problem(where, `console error: ${message.text()}`);
  });
  page.on("pageerror", (error) => problem(where, `script error: ${error.message}`));
  page.on("requestfailed", (request) => problem(where, `request failed: ${request.url()} (${request.failure()?.errorText})`));
  page.on("response", (response) => {
    if (response.status() >= 400) problem(where, `HTTP ${response.status()} for ${response.url()}`);
  });
  const response = await page.goto(url, { waitUntil: "load" });
  if (!response || !response.ok()) problem(where, `the page itself: HTTP ${response ? response.status() : "no response"}`);
  await page.waitForLoadState("networkidle").catch(() => {});

  const images = await page.$$eval("img", (all) => Promise.all(all.map(async (img) => {
    const decoded = await img.decode().then(() => true, () => false);
    return { src: img.currentSrc || img.src, complete: img.complete, decoded, width: img.naturalWidth, height: img.naturalHeight };
  })));
  for (const img of images) {
    if (!img.complete || !img.decoded || img.width === 0 || img.height === 0) {
      problem(where, `image did not load or has no size: ${img.src} (${img.width} x ${img.height})`);
    }
    const src = new URL(img.src);
    if (src.origin === origin && src.pathname.endsWith(".svg") && !pictures.has(src.href)) pictures.set(src.href, where);
  }
  const svgs = await page.$$eval("article svg", (all) => all.filter((svg) => svg.getClientRects().length > 0)
    .map((svg) => ({ width: svg.getBoundingClientRect().width, height: svg.getBoundingClientRect().height }))
    .filter((box) => box.width === 0 || box.height === 0).length);
  if (svgs > 0) problem(where, `${svgs} inline SVG element(s) drawn with no size`);

  for (const found of await page.evaluate(readerProblems, width)) problem(where, found);
  if (/\/sheets\/[^/]+\/$/.test(where)) {
    hintsOnSheets.set(where, await page.$$eval("article details > summary",
      (all) => all.filter((summary) => /^\s*Hint/.test(summary.textContent)).length));
  }

  const links = await page.$$eval("a[href]", (all) => all.map((a) => a.href));
  let internal = 0;
  for (const href of new Set(links)) {
    const link = new URL(href);
    if (link.origin !== origin) continue;
    internal += 1;
    const document = link.origin + link.pathname + link.search;
    const found = await target(document);
    if (found.status >= 400) {
      problem(where, `link to a missing page: ${link.pathname}`);
    } else if (link.hash.length > 1) {
      const id = decodeURIComponent(link.hash.slice(1));
      if (!found.ids.has(id)) problem(where, `link to a missing anchor: ${link.pathname}${link.hash}`);
    }
  }
  await page.close();
  return { images: images.length, links: internal };
}

// Runs in the page: what a reader would see as broken. Returns one line per problem.
function readerProblems(width) {
  const found = [];
  const article = document.querySelector("article") || document.body;
  const snippet = (text, at) => JSON.stringify(text.slice(Math.max(0, at - 30), at + 30).replace(/\s+/g, " "));
  const where = (node) => {
    const heading = [...article.querySelectorAll("h1, h2, h3")].filter((h) =>
      h.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
    return heading ? ` (under "${heading.textContent.replace(/¶$/, "").trim().slice(0, 50)}")` : "";
  };
  // Text outside code, formulas and pictures.
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => node.parentElement.closest("code, pre, kbd, script, style, svg, textarea, .arithmatex, .katex")
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
  });
  const rules = [
    [/`/, "a literal backtick (Markdown left unrendered)"],
    [/\*\*/, "a literal ** (Markdown left unrendered)"],
    [/\\[()[\]]|\$\$|\$[^$\s][^$]*\$/, "a raw formula delimiter"],
    [/[\w)|]\^-?[\w(]/, "a power written as text (a formula left unrendered)"],
  ];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const [pattern, what] of rules) {
      const match = pattern.exec(node.textContent);
      if (match) found.push(`${what}: ${snippet(node.textContent, match.index)}${where(node.parentElement)}`);
    }
    const address = /https?:\/\/\S+/.exec(node.textContent);
    if (address && !node.parentElement.closest("a")) {
      found.push(`a web address that is not a link: ${snippet(node.textContent, address.index)}${where(node.parentElement)}`);
    }
  }
  // A lab's chapter and sheet: one separator in the title ("04 · Tiled ...", "Lab 04 · Tiled ...").
  const title = article.querySelector("h1");
  const kind = /\/(labs|sheets)\/\d\d-/.exec(location.pathname);
  if (kind && title && !(kind[1] === "labs" ? /^\d\d · \S/ : /^Lab \d\d · \S/).test(title.textContent.trim())) {
    found.push(`title without the course's separator ("${kind[1] === "labs" ? "NN" : "Lab NN"} · Title"): ${snippet(title.textContent, 0)}`);
  }
  // Formulas: every one rendered, none that KaTeX could not parse.
  for (const formula of article.querySelectorAll(".arithmatex")) {
    if (!formula.querySelector(".katex")) found.push(`formula not rendered: ${snippet(formula.textContent, 0)}`);
  }
  for (const error of article.querySelectorAll(".katex-error")) {
    found.push(`formula KaTeX could not parse: ${snippet(error.textContent, 0)}${where(error)}`);
  }
  // Questions: a "Questions" line is followed by a list and holds nothing else.
  for (const p of article.querySelectorAll("p")) {
    const text = p.textContent.trim();
    const marker = /^Questions?\s*[.:]/.exec(text);
    if (!marker) continue;
    const next = p.nextElementSibling;
    if (text.length > marker[0].length) {
      found.push(`questions run into one paragraph: ${snippet(text, 0)}${where(p)}`);
    } else if (!next || !["OL", "UL"].includes(next.tagName)) {
      found.push(`a "Questions" line not followed by a list${where(p)}`);
    }
  }
  // A step table of harness output shown as preformatted text (wide, and cut off at the box's edge).
  for (const pre of article.querySelectorAll("pre")) {
    const lines = pre.textContent.split("\n");
    const header = lines.findIndex((line, i) => /^step\s{2,}name\s{2,}.*\btime\b/.test(line) && /^-{10,}$/.test(lines[i + 1] || ""));
    if (header >= 0 && lines.slice(header + 2).some((line) => /^\S+\s.*\d ms\b/.test(line))) {
      found.push(`a step table left as preformatted text: ${snippet(lines[header], 0)}${where(pre)}`);
    }
  }
  // Tables of the text no wider than the text column: a wider one is cut off at the column's edge
  // (the harness's step tables are exempt: they scroll by design, their step column kept in view).
  const column = article.clientWidth - parseFloat(getComputedStyle(article).paddingLeft) -
    parseFloat(getComputedStyle(article).paddingRight);
  for (const table of article.querySelectorAll("table:not(.harness-table)")) {
    const tableWidth = table.getBoundingClientRect().width;
    if (tableWidth > column + 1) {
      found.push(`a table wider than the text column (${Math.round(tableWidth)} px in ${Math.round(column)} px): ` +
        `its right part is cut off${where(table)}`);
    }
  }
  // Code: a line wraps only in a block marked to wrap (.wrap: an over-wide shell command), and a
  // comment beside code never breaks in two ("# the" beside the command, "standard edition" on the
  // next line); a comment that starts a line may wrap as text does.
  for (const code of article.querySelectorAll("pre > code")) {
    const lineHeight = parseFloat(getComputedStyle(code).lineHeight) || parseFloat(getComputedStyle(code).fontSize) * 1.4;
    const visualLines = (element) => [...element.getClientRects()].filter((r) => r.width > 0)
      .reduce((sum, r) => sum + Math.max(1, Math.round(r.height / lineHeight)), 0);
    const lines = [...code.querySelectorAll(":scope > span[id^='__span']")];
    if (!code.closest(".wrap")) {
      for (const line of lines) {
        if (line.getBoundingClientRect().height > 1.5 * lineHeight) {
          found.push(`a code line wraps in a block not marked to wrap: ${snippet(line.textContent, 0)}${where(code)}`);
        }
      }
    }
    for (const comment of code.querySelectorAll("span.c, span.ch, span.cm, span.cpf, span.c1, span.cs")) {
      const sourceLines = comment.textContent.replace(/\n+$/, "").split("\n").length;
      if (visualLines(comment) <= sourceLines) continue;
      // The last character of code before the comment, on its line: on the comment's first line?
      const line = comment.closest("span[id^='__span']") || code;
      const texts = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
      let before = null;
      for (let node = texts.nextNode(); node && !comment.contains(node); node = texts.nextNode()) {
        const at = node.textContent.search(/\S\s*$/);
        if (at >= 0) before = [node, at];
      }
      if (!before) continue;
      const range = document.createRange();
      range.setStart(before[0], before[1]);
      range.setEnd(before[0], before[1] + 1);
      const first = [...comment.getClientRects()].find((r) => r.width > 0);
      if (first && Math.abs(range.getBoundingClientRect().bottom - first.bottom) < lineHeight / 2) {
        found.push(`a code comment beside code breaks onto the next line: ${snippet(comment.textContent, 0)}${where(code)}`);
      }
    }
  }
  // Nothing wider than the window unless a container scrolls (or clips) it.
  const page = document.scrollingElement;
  if (page.scrollWidth > width + 1) found.push(`the page scrolls sideways: ${page.scrollWidth} px wide at ${width} px`);
  const scrolls = (element) => {
    for (let up = element.parentElement; up && up !== document.body; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (["auto", "scroll", "hidden", "clip"].includes(style.overflowX)) return true;
    }
    return false;
  };
  const wide = [];
  for (const element of article.querySelectorAll("*")) {
    const box = element.getBoundingClientRect();
    if (box.width === 0 || box.right <= width + 1 || scrolls(element)) continue;
    if (wide.some((outer) => outer.contains(element))) continue;
    wide.push(element);
    found.push(`wider than the window (right edge at ${Math.round(box.right)} px), not in a scrolling container: ` +
      `<${element.tagName.toLowerCase()}${element.className ? ` class="${element.className}"` : ""}>${where(element)}`);
  }
  return found;
}

// A picture (SVG) opened on its own, so that its labels, lines and markers can be measured.
async function checkPicture(page, url) {
  await page.goto(url, { waitUntil: "load" });
  return page.evaluate(pictureProblems);
}

// The fixtures: each must fail the rule it was made for.
async function checkFixtures(context) {
  const page = await context.newPage();
  for (const [name, expected] of FIXTURES) {
    const url = pathToFileURL(join(fixtureDir, name)).href;
    const found = name.endsWith(".svg") ? await checkPicture(page, url)
      : await page.goto(url, { waitUntil: "load" }).then(() => page.evaluate(readerProblems, width));
    if (!found.some((line) => expected.test(line))) {
      problem("the check itself", `fixture ${name} not caught (expected ${expected}; found: ${found.join("; ") || "nothing"})`);
    }
  }
  await page.close();
}

// Pictures of a few pages, each scrolled to what it shows, for a person to look at.
async function screenshots(context) {
  mkdirSync(shotDir, { recursive: true });
  for (const shot of SHOTS) {
    const page = await context.newPage();
    await page.goto(new URL(shot.path, base).href, { waitUntil: "load" });
    await page.waitForLoadState("networkidle").catch(() => {});
    {
      const element = page.locator(shot.selector).first();
      if (await element.count()) {
        await element.evaluate((e) => { if (e.tagName === "DETAILS") e.open = true; });
        await element.evaluate((e) => e.scrollIntoView({ block: "start" }));
        await page.evaluate(() => window.scrollBy(0, -90)); // below Material's header
      } else {
        problem(shot.path || "/", `screenshot: nothing matches ${shot.selector}`);
      }
    }
    await page.screenshot({ path: join(shotDir, `${shot.name}.png`) });
    await page.close();
  }
}

// The site search (Material's, in a web worker over search/search_index.json).
async function checkSearch(context, query) {
  const page = await context.newPage();
  await page.goto(base, { waitUntil: "load" });
  const input = page.locator("input.md-search__input");
  await input.click();
  // The index is built in a web worker after the page loads; until it is ready the result line
  // reads "Initializing search" and a query typed then may be dropped. On a loaded 2-core machine
  // building it has taken well over a minute, so wait for the line to change (up to 4 minutes)
  // before typing, then type the query again (up to three times) before calling it a miss.
  const meta = page.locator(".md-search-result__meta");
  await page.waitForFunction(
    () => {
      const line = document.querySelector(".md-search-result__meta");
      return line && !/initializ/i.test(line.textContent || "");
    },
    null,
    { timeout: 240000, polling: 500 },
  ).catch(() => {});
  let found = false;
  for (let attempt = 0; attempt < 3 && !found; attempt += 1) {
    await input.fill("");
    await input.type(query, { delay: 20 });
    found = await page.locator(".md-search-result__item").first().waitFor({ timeout: 30000 }).then(() => true, () => false);
  }
  if (!found) {
    const line = ((await meta.count()) ? await meta.first().innerText() : "").trim();
    problem("search", `"${query}": no result${line ? ` (the search line reads "${line}")` : ""}`);
  } else {
    const text = (await page.locator(".md-search-result__list").innerText()).toLowerCase();
    const words = query.toLowerCase().split(/\s+/);
    if (!words.every((word) => text.includes(word))) problem("search", `"${query}": results do not mention it`);
  }
  await page.close();
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
let verdict;
try {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const all = pages(siteDir).sort();
  let images = 0;
  let links = 0;
  // A few pages at a time: most of a page's time is waiting for the network to go quiet.
  const queue = [...all];
  const worker = async () => {
    for (let url = queue.shift(); url; url = queue.shift()) {
      const counted = await checkPage(context, url);
      images += counted.images;
      links += counted.links;
    }
  };
  await checkFixtures(context);
  await Promise.all(Array.from({ length: 4 }, worker));
  const pictureQueue = [...pictures];
  const pictureWorker = async () => {
    const page = await context.newPage();
    for (let next = pictureQueue.shift(); next; next = pictureQueue.shift()) {
      const [url, shownOn] = next;
      for (const found of await checkPicture(page, url)) problem(`${new URL(url).pathname} (on ${shownOn})`, found);
    }
    await page.close();
  };
  await Promise.all(Array.from({ length: 2 }, pictureWorker));
  for (const query of searches) await checkSearch(context, query);
  const hints = [...hintsOnSheets.values()].reduce((a, b) => a + b, 0);
  if (sheetHints === "yes" && hints === 0) {
    problem("sheets", `no sheet shows a hint (${hintsOnSheets.size} sheets): a site of the standard edition? ` +
      "then say SHEET_HINTS=no");
  }
  if (sheetHints === "no") {
    for (const [where, count] of hintsOnSheets) {
      if (count > 0) problem(where, `${count} hint(s) on a site whose sheets have none (SHEET_HINTS=no)`);
    }
  }
  if (shotDir) await screenshots(context);
  const summary = `${FIXTURES.length} fixtures caught, ${all.length} pages at ${width} px, ${images} images ` +
    `(${pictures.size} pictures measured), ${links} internal links, rendered text, formulas, question lists, ` +
    `widths, tables and code lines, search for ${searches.map((q) => `"${q}"`).join(" and ")}, ` +
    `${hints} hints on ${hintsOnSheets.size} sheets (SHEET_HINTS=${sheetHints})` +
    (shotDir ? `; screenshots in ${shotDir}` : "");
  verdict = problems.length === 0 ? `docs check: PASS (${summary})` : `docs check: FAIL (${problems.length} problem${problems.length === 1 ? "" : "s"}; ${summary})`;
} catch (error) {
  problems.push(`the check itself: ${error.message}`);
  verdict = `docs check: FAIL (the check could not finish: ${error.message.split("\n")[0]})`;
} finally {
  await browser.close();
}
for (const line of problems.slice(0, 60)) console.log(`  ${line}`);
if (problems.length > 60) console.log(`  ... and ${problems.length - 60} more`);
console.log(verdict);
process.exit(problems.length === 0 ? 0 : 1);
