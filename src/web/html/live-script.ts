/**
 * The script that keeps a page live, in every page's frame. It polls: every few seconds it
 * re-fetches the page and swaps the `#live` region, without a full reload, pausing while a form
 * field has focus or executions are selected for a bulk action. A page whose `<body>` names an
 * event stream (`data-stream`, the execution page of an unfinished execution) follows that
 * stream instead (`EventSource`, the page's own cookies and credentials):
 *
 * - each `step.progress` event's data is shown at once beside its step (`data-progress`);
 * - any other event is shown at once: a row in the trace, the step's new status in the steps
 *   list (a row added for a step the page did not list), the execution's final status; then the
 *   page is re-fetched and `#live` swapped (timeline, graph, steps, trace, status from the record),
 *   again until the record holds that event (it may hold it only at a later checkpoint), a
 *   bounded number of times. What the record does not hold yet is shown again over
 *   each swap;
 * - a dropped connection is reopened by the browser, which sends `Last-Event-ID`: the stream
 *   continues after the last event the page saw;
 * - the `end` event closes the stream and refreshes the page one last time; nothing polls after it;
 * - a stream the server refuses (an engine without an execution stream answers 501, a session
 *   that lapsed 401) falls back to polling;
 * - a parked execution's page (a "Waiting" card: the key's holders change without the
 *   execution's events) polls beside the stream.
 *
 * `<body data-stream-state>` says which: `connecting`, `open`, `reconnecting`, `ended`, or
 * `unavailable` (polling).
 *
 * @module
 */
import { EVENT_LOG_LEVELS } from '../../engine/model/event-logger.js';
import type { ReactorEventType } from '../../engine/model/events.js';
import type { ExecutionStatus, StepRecord } from '../../ports/store.js';

/** Every engine event's type: `EventSource` delivers a named SSE event only to a listener for that name. */
const EVENT_TYPES: readonly string[] = Object.keys(EVENT_LOG_LEVELS);

/** The status a step has after each event that changes it, as the steps list shows it. */
const STEP_STATUS: Readonly<Partial<Record<ReactorEventType, StepRecord['status']>>> = {
  'step.started': 'running',
  'step.retrying': 'retrying',
  'step.succeeded': 'completed',
  'step.failed': 'failed',
  'step.skipped': 'skipped',
  'step.halted': 'halted',
  'step.compensated': 'compensated',
  'step.undone': 'undone',
  'async.dispatched': 'dispatched',
};

/** The execution's status after its terminal events (the events a watch ends with). */
const FINAL_STATUS: Readonly<Partial<Record<ReactorEventType, ExecutionStatus>>> = {
  'run.completed': 'completed',
  'run.failed': 'failed',
  'run.halted': 'halted',
  'run.cancelled': 'cancelled',
};

/** Longest progress text shown beside a step, in characters. */
export const PROGRESS_TEXT_LIMIT = 200;

/** A step's progress report as the page shows it: a string as is, anything else as JSON, cut at {@link PROGRESS_TEXT_LIMIT}. */
export function progressText(data: unknown): string {
  const text = typeof data === 'string' ? data : (JSON.stringify(data) ?? String(data));
  return text.length > PROGRESS_TEXT_LIMIT ? `${text.slice(0, PROGRESS_TEXT_LIMIT - 1)}…` : text;
}

/** The client script, as the frame's `<script>` holds it (plain browser JavaScript). */
export const LIVE_SCRIPT = `
(() => {
  const body = document.body;
  const seconds = Number(body.dataset.refresh || 0);
  const streamUrl = body.dataset.stream;
  const LIMIT = ${String(PROGRESS_TEXT_LIMIT)};
  const STEP_STATUS = ${JSON.stringify(STEP_STATUS)};
  const FINAL_STATUS = ${JSON.stringify(FINAL_STATUS)};
  let streaming = false; // the event stream feeds the page: no polling (but beside a Waiting card)
  let finished = false; // the stream ended with the execution: nothing changes any more
  const progress = new Map(); // step path -> the newest progress text
  const seen = []; // the newest events from the stream (not progress): { type, at, step }
  let timer;
  let tries = 0;
  let seq = 0;

  const busy = () => {
    const focused = document.activeElement;
    if (focused && ['INPUT', 'SELECT', 'TEXTAREA'].includes(focused.tagName)) return true;
    return document.querySelector('input[form="bulk"]:checked') !== null; // keep a bulk selection
  };
  const fetchLive = async () => {
    const response = await fetch(location.href, { headers: { 'x-live-refresh': '1' } });
    if (!response.ok) return undefined;
    return new DOMParser().parseFromString(await response.text(), 'text/html').getElementById('live') || undefined;
  };
  const swap = (next) => {
    const here = document.getElementById('live');
    if (!here) return;
    here.innerHTML = next.innerHTML;
    overlay();
  };

  const progressText = (data) => {
    const text = typeof data === 'string' ? data : String(JSON.stringify(data));
    return text.length > LIMIT ? text.slice(0, LIMIT - 1) + '…' : text;
  };
  const offset = (ms) => {
    const abs = Math.round(Math.abs(ms));
    return (ms < 0 ? '−' : '+') + (abs < 1000 ? abs + ' ms' : (abs / 1000).toFixed(1) + ' s');
  };
  const keyOf = (e) => e.type + ' ' + e.at + ' ' + (e.step === undefined ? '' : e.step);
  /** The events a page's trace holds, by key. */
  const tracedIn = (root) =>
    new Set(
      [...root.querySelectorAll('table.trace tr[data-event]')].map((tr) =>
        keyOf({ type: tr.dataset.event, at: tr.dataset.at, step: tr.dataset.eventStep }),
      ),
    );
  /** The time of the newest event a page's trace holds (ms), or -Infinity. */
  const newestIn = (root) =>
    Math.max(-Infinity, ...[...root.querySelectorAll('table.trace tr[data-at]')].map((tr) => Date.parse(tr.dataset.at)));
  let shown = new Set(); // the events this page's trace holds now
  let newest = -Infinity; // and the time of its newest
  /** The step's row in the steps list, added when the page has none yet. */
  const stepRow = (step) => {
    const found = document.querySelector('table.steps tr[data-step="' + CSS.escape(step) + '"]');
    if (found) return found;
    let tbody = document.querySelector('table.steps tbody');
    if (!tbody) {
      const holder = document.querySelector('[data-steps]');
      if (!holder) return undefined;
      holder.innerHTML = '<table class="steps"><thead><tr><th>Step</th><th>Status</th><th>Attempts</th><th>Result / error</th></tr></thead><tbody></tbody></table>';
      tbody = holder.querySelector('tbody');
    }
    const row = document.createElement('tr');
    row.dataset.step = step;
    row.innerHTML = '<td><code></code></td><td><span class="badge s-running">running</span></td><td></td><td></td>';
    row.querySelector('code').textContent = step;
    tbody.append(row);
    return row;
  };
  const setBadge = (badge, status) => {
    if (!badge || badge.textContent === status) return;
    badge.className = 'badge s-' + status;
    badge.textContent = status;
  };
  const traceRow = (e) => {
    const tbody = document.querySelector('table.trace tbody');
    if (!tbody) return;
    const first = Date.parse(tbody.querySelector('tr[data-at]')?.dataset.at ?? e.at);
    const row = document.createElement('tr');
    row.dataset.event = e.type;
    row.dataset.at = e.at;
    if (e.step !== undefined) row.dataset.eventStep = e.step;
    row.innerHTML = '<td class="mono"><time></time></td><td><code></code></td><td></td><td><span class="summary muted">live</span></td>';
    const time = row.querySelector('time');
    time.dateTime = e.at;
    time.title = time.dateTime;
    time.textContent = offset(Date.parse(e.at) - first);
    row.querySelector('code').textContent = e.type;
    if (e.step !== undefined) {
      const step = document.createElement('code');
      step.textContent = e.step;
      row.cells[2].append(step);
    }
    tbody.append(row);
  };
  /** Shows an event the page does not hold yet: a trace row, the step's status, the final status. */
  const apply = (e) => {
    const key = keyOf(e);
    // The page shows it, or the record holds newer (an older event may be summarized out of its trace).
    if (shown.has(key) || Date.parse(e.at) < newest) return;
    shown.add(key);
    traceRow(e);
    const status = STEP_STATUS[e.type];
    if (status !== undefined && e.step !== undefined) {
      const row = stepRow(e.step);
      if (row) setBadge(row.cells[1].querySelector('.badge'), status);
    }
    const final = FINAL_STATUS[e.type];
    const heading = document.querySelector('[data-execution-status]');
    if (final !== undefined && heading && heading.dataset.terminal !== 'true') {
      heading.dataset.executionStatus = final;
      heading.dataset.terminal = 'true';
      setBadge(heading.querySelector('.badge'), final);
    }
  };
  /** Each step's newest progress, beside it. */
  const showProgress = () => {
    for (const [step, text] of progress) {
      const row = stepRow(step);
      if (!row) continue;
      let cell = row.querySelector('[data-progress]');
      if (!cell) {
        cell = document.createElement('div');
        cell.className = 'progress';
        cell.dataset.progress = step;
        row.cells[1].append(cell);
      }
      if (cell.textContent !== text) cell.textContent = text;
    }
  };
  /** After a swap: what the stream said that the record does not hold yet, and the progress. */
  const overlay = () => {
    shown = tracedIn(document);
    newest = newestIn(document);
    for (const e of seen) apply(e);
    showProgress();
  };

  const poll = async () => {
    if (finished || busy()) return;
    // A parked execution's holders change without its events: its page polls beside the stream.
    if (streaming && document.querySelector('.card.waiting') === null) return;
    try {
      const next = await fetchLive();
      if (next) swap(next);
    } catch { /* offline for a moment: try again next time */ }
  };
  if (seconds) setInterval(poll, seconds * 1000);

  if (!streamUrl || typeof EventSource !== 'function') return;

  /** Whether a fetched page holds the newest event seen (and, once the stream ended, a final status). */
  const caughtUp = (next) => {
    if (finished && next.querySelector('[data-execution-status][data-terminal="true"]') === null) return false;
    const last = seen[seen.length - 1];
    return last === undefined || tracedIn(next).has(keyOf(last));
  };
  const schedule = (ms) => {
    clearTimeout(timer);
    timer = setTimeout(refresh, ms);
  };
  const refresh = async () => {
    if (busy()) return schedule(1000);
    const mine = ++seq;
    let next;
    try {
      next = await fetchLive();
    } catch { /* offline for a moment */ }
    if (mine !== seq) return; // a newer refresh runs
    if (next) swap(next);
    if (next && caughtUp(next)) {
      tries = 0;
      return;
    }
    // The record may hold the event only at a later checkpoint: look again, a bounded number of times.
    if (++tries <= (finished ? 30 : 10)) schedule(Math.min(250 * tries, 2000));
    else tries = 0;
  };

  shown = tracedIn(document); // the events the page was rendered with
  newest = newestIn(document);
  const source = new EventSource(streamUrl);
  body.dataset.streamState = 'connecting';
  source.onopen = () => {
    streaming = true;
    body.dataset.streamState = 'open';
  };
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) {
      // Refused (no execution stream, a lapsed session): poll as before.
      streaming = false;
      body.dataset.streamState = finished ? 'ended' : 'unavailable';
      return;
    }
    body.dataset.streamState = 'reconnecting'; // the browser reconnects, sending Last-Event-ID
  };
  const onEvent = (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    if (event.type === 'step.progress') {
      progress.set(event.step, progressText(event.data));
      showProgress();
      return;
    }
    const e = { type: event.type, at: new Date(event.at).toISOString(), step: event.step };
    seen.push(e);
    if (seen.length > 500) seen.shift();
    apply(e);
    tries = 0;
    schedule(150);
  };
  for (const type of ${JSON.stringify(EVENT_TYPES)}) source.addEventListener(type, onEvent);
  source.addEventListener('end', () => {
    source.close();
    finished = true;
    streaming = false;
    body.dataset.streamState = 'ended';
    tries = 0;
    schedule(0);
  });
})();
`;
