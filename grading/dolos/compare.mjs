// SPDX-License-Identifier: MIT
// Compares one lab's submissions with Dolos (winnowing over the tokens of a tree-sitter parse), the
// starter as the template: fingerprints the starter also has never count. Called by
// grading/similarity.py, one lab at a time.
//
// Standard input, JSON:
//   {"language": "cpp", "kgram_length": 23, "kgrams_in_window": 17, "threshold": 0.5,
//    "template": "<the starter's text>" or null, "files": [{"name": "<id>", "content": "<text>"}, ...]}
// Standard output, JSON:
//   {"dolos": "<version>", "pairs": [{"left": i, "right": j, "similarity": s, "left_shared": n,
//     "left_own": n, "right_shared": n, "right_own": n, "longest": n,
//     "fragments": [{"left": [startRow, startCol, endRow, endCol], "right": [...], "kgrams": n}]}]}
//   Every pair of files; fragments (rows from 0) only for the pairs at or above the threshold.
//   similarity = (left_shared + right_shared) / (left_own + right_own): of each side's own
//   fingerprints (those not in the template), the share that the other side has too.
import { readFileSync } from "node:fs";
import { Dolos, File } from "@dodona/dolos-lib";

const job = JSON.parse(readFileSync(0, "utf8"));
const dolos = new Dolos({
  language: job.language || "cpp",
  kgramLength: job.kgram_length,
  kgramsInWindow: job.kgrams_in_window,
});
const files = job.files.map((f, i) => new File(`${i}/${f.name}`, f.content));
const template = job.template != null ? new File("template", job.template) : undefined;
const report = await dolos.analyze(files, "lab", template);

const own = (entry) => {  // this file's fingerprint occurrences that the template does not have
  let count = 0;
  for (const shared of entry.shared) count += shared.occurrencesOf(entry.file).length;
  return count;
};
const region = (r) => [r.startRow, r.startCol, r.endRow, r.endCol];
const pairs = [];
for (const pair of report.allPairs()) {
  const left = Number(pair.leftFile.file.path.split("/", 1)[0]);
  const right = Number(pair.rightFile.file.path.split("/", 1)[0]);
  const leftOwn = own(pair.leftEntry);
  const rightOwn = own(pair.rightEntry);
  const denominator = leftOwn + rightOwn;
  const similarity = denominator > 0 ? (pair.leftCovered + pair.rightCovered) / denominator : 0;
  const item = { left, right, similarity, left_shared: pair.leftCovered, left_own: leftOwn,
                 right_shared: pair.rightCovered, right_own: rightOwn, longest: pair.longest, fragments: [] };
  if (similarity >= job.threshold) {
    item.fragments = pair.buildFragments().map((fragment) => ({
      left: region(fragment.leftSelection), right: region(fragment.rightSelection), kgrams: fragment.pairs.length,
    }));
  }
  pairs.push(item);
}
const version = JSON.parse(readFileSync(new URL("./node_modules/@dodona/dolos-lib/package.json", import.meta.url), "utf8")).version;
process.stdout.write(JSON.stringify({ dolos: version, pairs }));
