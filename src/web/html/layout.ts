/**
 * The page frame: navigation, the style sheet and the live script (`live-script.ts`: it re-fetches
 * the page every few seconds and swaps the `#live` region, without a full reload, or follows the
 * execution's event stream on an execution page).
 *
 * @module
 */
import { html, raw } from 'hono/html';
import type { Fragment } from './format.js';
import { LIVE_SCRIPT } from './live-script.js';

/** What every page needs to render its frame. */
export interface PageContext {
  /** The base path links start with ('' at the root). */
  readonly base: string;
  readonly readOnly: boolean;
  /** Seconds between live refreshes; 0 turns them off. */
  readonly refreshSeconds: number;
  /** Whether the dashboard shows schedules (a "Schedules" link). */
  readonly schedules?: boolean;
  /** Whether the dashboard shows sent events (an "Events" link). */
  readonly events?: boolean;
}

const CSS = `
:root { --fg:#1d2330; --muted:#6b7385; --line:#d9dde6; --bg:#f6f7fa; --card:#fff; --accent:#2458d3; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); background:var(--bg); }
header { background:#1d2330; color:#fff; padding:10px 20px; display:flex; gap:24px; align-items:center; }
header a { color:#cfd8ff; text-decoration:none; } header a.on { color:#fff; font-weight:600; }
header .brand { font-weight:700; color:#fff; }
main { padding:16px 20px 40px; max-width:1400px; }
h1 { font-size:20px; margin:4px 0 12px; } h2 { font-size:16px; margin:22px 0 8px; }
a { color:var(--accent); }
table { border-collapse:collapse; width:100%; background:var(--card); border:1px solid var(--line); }
th, td { text-align:left; padding:6px 10px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#eef1f6; font-weight:600; font-size:13px; }
code, pre, .mono { font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; font-size:12.5px; }
pre.json { margin:0; white-space:pre-wrap; word-break:break-word; background:#f1f3f8; padding:6px 8px; border-radius:4px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:6px; padding:12px 14px; margin-bottom:14px; }
.grid { display:grid; grid-template-columns:repeat(auto-fit,minmax(320px,1fr)); gap:14px; }
.muted { color:var(--muted); } .empty { color:var(--muted); font-style:italic; padding:8px 0; }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; font-weight:600; background:#e3e6ee; }
.s-completed,.s-succeeded { background:#d6f5e0; color:#11632f; }
.s-failed { background:#fde0e0; color:#9d1c1c; }
.s-parked { background:#fff0c8; color:#7a5300; }
.s-running,.s-retrying,.s-rolling_back,.s-dispatched { background:#dbe7ff; color:#1f47a8; }
.s-pending, .s-queued { background:#ece6fb; color:#52329b; }
.s-paused { background:#fde7f3; color:#8a1f5c; }
.s-halted,.s-skipped { background:#e9ecef; color:#444; }
.s-cancelled,.s-aborted,.s-compensated,.s-undone { background:#f3e2d6; color:#7a3d10; }
.error { border-left:3px solid #d33; padding:4px 8px; margin:4px 0; background:#fff6f6; }
.cause { margin:4px 0 0 14px; }
form.filters { display:flex; gap:10px; flex-wrap:wrap; align-items:end; margin-bottom:12px; }
form.filters label { display:flex; flex-direction:column; font-size:12px; color:var(--muted); }
input, select, textarea { font:inherit; padding:4px 6px; border:1px solid var(--line); border-radius:4px; }
button, .button { font:inherit; padding:5px 12px; border-radius:4px; border:1px solid var(--accent); background:var(--accent); color:#fff; cursor:pointer; text-decoration:none; display:inline-block; }
.button.secondary { background:#fff; color:var(--accent); }
.button.danger, button.danger { background:#c62828; border-color:#c62828; }
.actions { display:flex; gap:8px; flex-wrap:wrap; }
.notice { background:#e7f6ec; border:1px solid #9fd9b2; padding:8px 12px; border-radius:4px; margin-bottom:12px; }
.tabs a { margin-right:10px; } .tabs a.on { font-weight:700; text-decoration:none; color:var(--fg); }
svg.dag text { font:12px system-ui,sans-serif; }
svg.timeline text { font:11px system-ui,sans-serif; fill:#1d2330; }
.timeline-card { overflow-x:auto; }
.bar { stroke:none; } .bar.open { stroke:#1d2330; stroke-dasharray:3 2; stroke-width:1; }
.b-attempt { fill:#5b8def; background:#5b8def; } .b-failed { fill:#d9534f; background:#d9534f; }
.b-backoff { fill:#c3c8d4; background:#c3c8d4; } .b-park { fill:#f0b429; background:#f0b429; }
.b-wait { fill:#f7d070; background:#f7d070; } .b-sleep { fill:#9c7ae0; background:#9c7ae0; }
.b-pause { fill:#e06aa8; background:#e06aa8; } .b-rollback { fill:#d9a47c; background:#d9a47c; }
.progress { font-size:12px; color:var(--muted); margin-top:3px; font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; word-break:break-word; }
.b-undo, .b-compensate { fill:#7a3d10; background:#7a3d10; } .b-queued { fill:#b9c3d6; background:#b9c3d6; }
.legend { font-size:12px; color:var(--muted); margin:6px 0 0; } .legend .key { margin-right:12px; white-space:nowrap; }
.legend i { display:inline-block; width:12px; height:10px; border-radius:2px; margin-right:4px; vertical-align:middle; }
table.trace details summary { cursor:pointer; color:var(--accent); font-size:12px; }
table.trace .summary { font-size:12.5px; }
.match { font-size:11px; background:#e7f0ff; color:#1f47a8; border-radius:8px; padding:0 6px; margin-left:6px; }
form.bulk { margin:0 0 8px; align-items:center; } form.bulk button.secondary { background:#fff; color:var(--accent); }
.counts { display:flex; gap:12px; flex-wrap:wrap; margin:8px 0 4px; }
.count { background:var(--card); border:1px solid var(--line); border-radius:6px; padding:8px 14px; display:flex; flex-direction:column; min-width:96px; }
.count .n { font-size:20px; font-weight:700; }
svg.dag .n-completed rect { fill:#d6f5e0; stroke:#2f8a4c; } svg.dag .n-failed rect { fill:#fde0e0; stroke:#c62828; }
svg.dag .n-parked rect { fill:#fff0c8; stroke:#c08a00; } svg.dag .n-running rect, svg.dag .n-retrying rect, svg.dag .n-dispatched rect { fill:#dbe7ff; stroke:#2458d3; }
svg.dag .n-paused rect { fill:#fde7f3; stroke:#b0357a; }
svg.dag .n-pending rect { fill:#fff; stroke:#9aa3b5; stroke-dasharray:4 3; }
svg.dag .n-skipped rect, svg.dag .n-halted rect { fill:#eceef1; stroke:#7d8595; }
svg.dag .n-compensated rect, svg.dag .n-undone rect { fill:#f3e2d6; stroke:#a0521d; }
`;

/**
 * A whole page. `live: false` (confirm pages) turns the refresh off; `stream` (the URL of an
 * execution's event stream) makes the page follow it, polling only when it is refused (neither
 * when the dashboard's `refreshSeconds` is 0).
 */
export function page(
  ctx: PageContext,
  options: {
    readonly title: string;
    readonly nav: 'executions' | 'coordination' | 'schedules' | 'queue' | 'events';
    readonly live?: boolean;
    readonly stream?: string;
  },
  body: Fragment | string,
): Fragment {
  const on = (name: string): string => (options.nav === name ? 'on' : '');
  const refresh = options.live === false ? 0 : ctx.refreshSeconds;
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${options.title} · ts-reactor</title><link rel="icon" type="image/svg+xml" href="${ctx.base}/favicon.svg"><style>${raw(CSS)}</style></head>
<body data-refresh="${String(refresh)}"${options.stream === undefined || refresh === 0 ? '' : html` data-stream="${options.stream}"`}>
<header><span class="brand">ts-reactor</span><a class="${on('executions')}" href="${ctx.base}/executions">Executions</a><a class="${on('coordination')}" href="${ctx.base}/coordination">Coordination</a><a class="${on('queue')}" href="${ctx.base}/queue">Queue</a>${ctx.schedules ? html`<a class="${on('schedules')}" href="${ctx.base}/schedules">Schedules</a>` : ''}${ctx.events ? html`<a class="${on('events')}" href="${ctx.base}/events">Events</a>` : ''}${ctx.readOnly ? html`<span class="muted">read-only</span>` : ''}</header>
<main id="live">${body}</main>
<script>${raw(LIVE_SCRIPT)}</script>
</body></html>`;
}
