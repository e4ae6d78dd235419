/**
 * The step graph as a server-rendered SVG: one box per step in columns by dependency depth,
 * coloured by status; solid edges for result dependencies, dashed for `waitFor`.
 *
 * @module
 */
import { html } from 'hono/html';
import type { GraphSource, GraphView } from '../../ops/types.js';
import type { Fragment } from './format.js';

const W = 160;
const H = 44;
const GAP_X = 64;
const GAP_Y = 18;
const PAD = 12;

/** Characters that fit in a box at 12 px (bold names are wider), with 10 px of padding on each side. */
const NAME_CHARS = Math.floor((W - 20) / 7.4);
const STATUS_CHARS = Math.floor((W - 20) / 6.6);
/** Room the "returns" tag takes from the name. */
const RETURNS_CHARS = 7;

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
    const status = n.kind === 'step' ? n.status : `${n.status} · ${n.kind}`;
    // The returned step carries a small "returns" tag at its top right; the name gives way to it.
    const tag = n.returns
      ? html`<text class="returns" x="${p.x + W - 8}" y="${p.y + 14}" text-anchor="end" font-size="10" fill="#2458d3">returns</text>`
      : '';
    const nameRoom = n.returns ? NAME_CHARS - RETURNS_CHARS : NAME_CHARS;
    return html`<g class="node n-${n.status}" data-step="${n.name}" data-status="${n.status}"${n.returns ? html` data-returns="true"` : ''}><title>${n.name}: ${status}${n.returns ? " (its result is the reactor's value)" : ''}</title><rect x="${p.x}" y="${p.y}" width="${W}" height="${H}" rx="6" stroke-width="1.5"></rect><text x="${p.x + 10}" y="${p.y + 18}" font-weight="600">${clip(n.name, nameRoom)}</text>${tag}<text x="${p.x + 10}" y="${p.y + 34}" fill="#4a5263">${clip(status, STATUS_CHARS)}</text></g>`;
  });
  return html`<svg class="dag" role="img" aria-label="step graph" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg"><defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#7d8595"></path></marker></defs>${edges}${nodes}</svg>${sourceNote(graph)}`;
}

/** `version "2", fingerprint 1a2b…` */
const definitionName = (s: GraphSource): string =>
  `${s.version === undefined ? '' : `version "${s.version}", `}fingerprint ${s.fingerprint}`;

/** Which definition the graph was drawn from. */
function sourceNote(graph: GraphView): Fragment | string {
  const s = graph.source;
  if (s === undefined)
    return graph.fromDefinition
      ? ''
      : html`<p class="muted">The reactor is not registered with this dashboard: steps come from the record, without their dependencies.</p>`;
  const text: Record<GraphSource['kind'], string> = {
    own: `Drawn from the definition it runs with (${definitionName(s)}).`,
    current: `Drawn from the reactor's current definition (${definitionName(s)}): the record names no version.`,
    migrating: `Drawn from ${definitionName(s)}, which continues executions of its version (migrateFrom): steps under their new names.`,
    unregistered: `The definition it runs with (${definitionName(s)}) is not registered with this dashboard: steps come from the record, without their dependencies.`,
  };
  return html`<p class="muted graph-source" data-graph-source="${s.kind}"${s.version === undefined ? '' : html` data-version="${s.version}"`}>${text[s.kind]}</p>`;
}
