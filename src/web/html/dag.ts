/**
 * The step graph as a server-rendered SVG: one box per step in columns by dependency depth,
 * coloured by status; solid edges for result dependencies, dashed for `waitFor`.
 *
 * @module
 */
import { html } from 'hono/html';
import type { GraphView } from '../../ops/types.js';
import type { Fragment } from './format.js';

const W = 160;
const H = 44;
const GAP_X = 64;
const GAP_Y = 18;
const PAD = 12;

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** Renders the graph; an empty graph renders a note instead. */
export function dagSvg(graph: GraphView): Fragment | string {
  if (graph.nodes.length === 0) return html`<p class="empty">No steps recorded yet.</p>`;
  const at = new Map(
    graph.nodes.map((n) => [n.name, { x: PAD + n.layer * (W + GAP_X), y: PAD + n.row * (H + GAP_Y) }]),
  );
  const width = PAD * 2 + (Math.max(...graph.nodes.map((n) => n.layer)) + 1) * (W + GAP_X) - GAP_X;
  const height = PAD * 2 + (Math.max(...graph.nodes.map((n) => n.row)) + 1) * (H + GAP_Y) - GAP_Y;
  const edges = graph.edges.map((e) => {
    const from = at.get(e.from);
    const to = at.get(e.to);
    if (!from || !to) return '';
    const [x1, y1, x2, y2] = [from.x + W, from.y + H / 2, to.x, to.y + H / 2];
    const mid = (x1 + x2) / 2;
    return html`<path d="M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2 - 4},${y2}" fill="none" stroke="#7d8595" stroke-width="1.5"${e.kind === 'waitFor' ? html` stroke-dasharray="5 4"` : ''} marker-end="url(#arrow)"><title>${e.from} → ${e.to} (${e.kind === 'result' ? 'reads its result' : 'waits for it'})</title></path>`;
  });
  const nodes = graph.nodes.map((n) => {
    const p = at.get(n.name)!;
    const label = `${n.kind === 'step' ? '' : `${n.kind} `}${n.returns ? '⟶ returns' : ''}`.trim();
    return html`<g class="node n-${n.status}" data-step="${n.name}" data-status="${n.status}"><title>${n.name}: ${n.status}</title><rect x="${p.x}" y="${p.y}" width="${W}" height="${H}" rx="6" stroke-width="1.5"></rect><text x="${p.x + 10}" y="${p.y + 18}" font-weight="600">${clip(n.name, 20)}</text><text x="${p.x + 10}" y="${p.y + 34}" fill="#4a5263">${n.status}${label === '' ? '' : ` · ${label}`}</text></g>`;
  });
  return html`<svg class="dag" role="img" aria-label="step graph" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg"><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#7d8595"></path></marker></defs>${edges}${nodes}</svg>${graph.fromDefinition ? '' : html`<p class="muted">The reactor is not registered with this dashboard: steps come from the record, without their dependencies.</p>`}`;
}
