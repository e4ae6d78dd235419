/* global process, console -- a Node script */
// Reads Vitest's JSON report and prints one plain line: `N passed, N failed`.
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
  process.exit(1);
}

const passed = Number(report.numPassedTests ?? 0);
// A file that fails to load has no failed test but a failed suite: count it as a failure.
const brokenFiles = (report.testResults ?? []).filter(
  (file) => file.status === 'failed' && (file.assertionResults ?? []).every((t) => t.status !== 'failed'),
).length;
const failed = Number(report.numFailedTests ?? 0) + brokenFiles;

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || report.success === false ? 1 : 0);
