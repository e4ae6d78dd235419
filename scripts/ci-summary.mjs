/* global process, console -- a Node script */
// Reads Vitest's JSON report and prints one plain line: `N passed, N failed`, then one line per
// failed test (`FAILED file > test: first line of the message`) and per file that failed to load.
// Exits 1 when a test failed, a test file failed to load, or the report is missing.
import { readFileSync } from 'node:fs';

const path = process.argv[2];
if (!path) {
  console.error('usage: node scripts/ci-summary.mjs <vitest-json-report>');
  process.exit(2);
}

let report;
try {
  report = JSON.parse(readFileSync(path, 'utf8'));
} catch (error) {
  console.error(`ci-summary: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`);
  console.log('0 passed, 1 failed');
  console.log('FAILED no report: a check before vitest (tsc, eslint, prettier, imports) failed, or vitest crashed');
  process.exit(1);
}

const passed = Number(report.numPassedTests ?? 0);
// A file that fails to load has no failed test but a failed suite: count it as a failure.
const brokenFiles = (report.testResults ?? []).filter(
  (file) => file.status === 'failed' && (file.assertionResults ?? []).every((t) => t.status !== 'failed'),
).length;
const failed = Number(report.numFailedTests ?? 0) + brokenFiles;

console.log(`${passed} passed, ${failed} failed`);

const root = process.cwd();
const relative = (name) => (name.startsWith(`${root}/`) ? name.slice(root.length + 1) : name);
const firstLine = (messages) =>
  String((messages ?? [])[0] ?? '')
    .split('\n')[0]
    .slice(0, 300);
for (const file of report.testResults ?? []) {
  const tests = file.assertionResults ?? [];
  for (const test of tests.filter((t) => t.status === 'failed')) {
    console.log(`FAILED ${relative(file.name)} > ${test.fullName ?? test.title}: ${firstLine(test.failureMessages)}`);
  }
  if (file.status === 'failed' && tests.every((t) => t.status !== 'failed')) {
    console.log(
      `FAILED ${relative(file.name)} (the file failed to load or a hook failed): ${firstLine([file.message])}`,
    );
  }
}
process.exit(failed > 0 || report.success === false ? 1 : 0);
