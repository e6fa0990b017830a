// SPDX-License-Identifier: MIT
// Reviews a class's written answers in headless Chromium the way a TA does on the answers review
// page (grading/review.py): marks the empty answers 0 with the page's button, clicks a mark for every
// answer of the first question, sets the rest from the keyboard (a row selected, 0/1/2, the next row
// follows), downloads the marks, then opens the page again and reads back what the browser kept.
// Checks on the way that no text of a submission ran or became an element (script, image, frame,
// style, link), that nothing outside the page was requested, and that the page logged no error.
// Usage: node grading/review_browser.mjs PAGE.html DOWNLOAD_DIR [SCREENSHOT.png]
// Prints one JSON object: the marks it set (by student and question), the file it downloaded, the
// seconds the marking took, the marks the page showed after a reload, and the problems found (exit 1
// when there are any). Uses tools/docs/browser-check's playwright-core (npm ci there) and Chromium
// (Debian's chromium, or CHROMIUM=/path).
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [pagePath, downloadDir, shot] = process.argv.slice(2);
if (!pagePath || !downloadDir) {
  console.error("usage: node review_browser.mjs PAGE.html DOWNLOAD_DIR [SCREENSHOT.png]");
  process.exit(2);
}
const repo = dirname(dirname(fileURLToPath(import.meta.url)));
const require = createRequire(join(repo, "tools", "docs", "browser-check", "package.json"));
const { chromium } = require("playwright-core");

// The mark the script gives an answer that is not empty: spread over 0, 1 and 2.
const planned = (s, q) => (s + q) % 3;
const problems = [];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
let result;
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  page.on("console", (message) => { if (message.type() === "error") problems.push(`console: ${message.text()}`); });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("request", (request) => {
    if (!/^(file|blob|data):/.test(request.url())) problems.push(`a request outside the page: ${request.url()}`);
  });
  const url = pathToFileURL(pagePath).href;
  const opened = Date.now();
  await page.goto(url);
  await page.waitForSelector("body[data-ready=yes]");
  const data = JSON.parse(await page.locator("#review-data").textContent());
  const students = data.students.length;
  const questions = data.questions.length;

  const started = Date.now();
  await page.click("#mark-empty");
  const blank = new Set(await page.$$eval("tr.answer.blank",
    (rows) => rows.map((r) => `${r.dataset.s}:${r.dataset.q}`)));
  const want = (s, q) => (blank.has(`${s}:${q}`) ? 0 : planned(s, q));
  const perQuestion = [];  // seconds to mark each question's answers (one per student)
  let lap = Date.now();
  for (let s = 0; s < students; s++) {  // the first question: a click on each mark
    await page.click(`tr.answer[data-s="${s}"][data-q="0"] input[value="${want(s, 0)}"]`);
  }
  perQuestion.push((Date.now() - lap) / 1000);
  await page.focus(`tr.answer[data-s="0"][data-q="1"]`);  // the others: the keyboard, row after row
  for (let q = 1; q < questions; q++) {
    lap = Date.now();
    for (let s = 0; s < students; s++) await page.keyboard.press(String(want(s, q)));
    perQuestion.push((Date.now() - lap) / 1000);
  }
  const marked = Date.now();
  const progress = await page.locator("#progress").textContent();
  if (progress !== `${students * questions} of ${students * questions} answers marked`) {
    problems.push(`after marking, the page says "${progress}"`);
  }
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download")]);
  const saved = join(downloadDir, download.suggestedFilename());
  await download.saveAs(saved);
  const downloaded = Date.now();

  // What a submission's text must not have become: elements, a script that ran, a hidden page.
  const injected = await page.evaluate(() => ({
    pwned: typeof window.__pwned === "undefined" ? null : String(window.__pwned),
    elements: document.querySelectorAll(["script", "img", "svg", "iframe", "style", "meta", "textarea", "a", "link",
      "object", "embed", "form"].map((tag) => `table.answers ${tag}`).join(", ")).length,
    scripts: document.scripts.length,
    hidden: getComputedStyle(document.body).display === "none",
  }));
  if (injected.pwned !== null) problems.push(`a submission's script ran: ${injected.pwned}`);
  if (injected.elements) problems.push(`${injected.elements} element(s) made from a submission's text`);
  if (injected.scripts !== 2) problems.push(`${injected.scripts} script elements, the page has 2`);
  if (injected.hidden) problems.push("a submission's style hid the page");
  if (shot) await page.screenshot({ path: shot, fullPage: false });

  const again = await context.newPage();  // the marks kept in the browser (localStorage)
  await again.goto(url);
  await again.waitForSelector("body[data-ready=yes]");
  const kept = await again.locator("#progress").textContent();
  if (kept !== progress) problems.push(`after a reload the page says "${kept}", before it "${progress}"`);

  const marks = {};
  data.students.forEach((sid, s) => {
    marks[sid] = {};
    data.questions.forEach((label, q) => { marks[sid][label] = want(s, q); });
  });
  result = {
    page: pagePath, downloaded: saved, students, questions, answers: students * questions, blank: blank.size,
    seconds_to_open: (started - opened) / 1000, seconds_marking: (marked - started) / 1000,
    seconds_per_question: perQuestion,
    seconds_to_download: (downloaded - marked) / 1000, progress, after_reload: kept, marks, problems,
  };
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
process.exit(problems.length ? 1 : 0);
