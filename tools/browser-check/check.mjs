// SPDX-License-Identifier: MIT
// Opens every page of the built course site in headless Chromium and checks what a reader would
// notice: console errors and failed requests, images that do not load or have no size, links and
// anchors inside the site that lead nowhere, and a site search that does not find what it should.
// Usage: node check.mjs BASE_URL SITE_DIR   (tools/docs-check.sh serves SITE_DIR at BASE_URL)
// Prints the problems, then one verdict line; exits 0 only when there are none.
import { chromium } from "playwright-core";
import { readdirSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";

const [base, siteDir] = process.argv.slice(2);
if (!base || !siteDir) {
  console.error("usage: node check.mjs BASE_URL SITE_DIR");
  process.exit(2);
}
const origin = new URL(base).origin;
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

  const images = await page.$$eval("img", (all) =>
    all.map((img) => ({ src: img.currentSrc || img.src, complete: img.complete, width: img.naturalWidth, height: img.naturalHeight })));
  for (const img of images) {
    if (!img.complete || img.width === 0 || img.height === 0) {
      problem(where, `image did not load or has no size: ${img.src} (${img.width} x ${img.height})`);
    }
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

// The site search (Material's, in a web worker over search/search_index.json).
async function checkSearch(context, query) {
  const page = await context.newPage();
  await page.goto(base, { waitUntil: "load" });
  const input = page.locator("input.md-search__input");
  await input.click();
  // The index loads in a web worker after the page; a query typed before it is ready may be
  // dropped, so type it again (up to three times) before calling it a miss.
  let found = false;
  for (let attempt = 0; attempt < 3 && !found; attempt += 1) {
    await input.fill("");
    await input.type(query, { delay: 20 });
    found = await page.locator(".md-search-result__item").first().waitFor({ timeout: 10000 }).then(() => true, () => false);
  }
  if (!found) {
    problem("search", `"${query}": no result`);
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
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
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
  await Promise.all(Array.from({ length: 4 }, worker));
  for (const query of searches) await checkSearch(context, query);
  const summary = `${all.length} pages, ${images} images, ${links} internal links, search for ${searches.map((q) => `"${q}"`).join(" and ")}`;
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
