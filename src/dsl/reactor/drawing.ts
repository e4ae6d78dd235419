/**
 * `toMermaid`: a built reactor's graph as a Mermaid flowchart.
 *
 * @module
 */
import type { AnyReactorDefinition, GraphNode, NodeKind } from './nodes.js';

const box = (id: string, label: string): string => `${id}["${label}"]`;
const composed = (id: string, label: string): string => `${id}[["${label} (compose)"]]`;

/** The shape each node kind is drawn as: a box for a step of any kind, a subroutine for a child reactor. */
const SHAPES: Readonly<Record<NodeKind, (id: string, label: string) => string>> = {
  step: box,
  'async-step': box,
  interrupt: box,
  sleep: box,
  'wait-for-event': box,
  compose: composed,
  'async-reactor': composed,
  map: (id, label) => `${id}{{"${label} (map)"}}`,
};

/**
 * Draws a reactor's graph as a Mermaid flowchart: one node per step, an edge per dependency
 * (dotted for `waitFor`), and the `returns` step marked.
 */
export function toMermaid(definition: AnyReactorDefinition): string {
  const id = (name: string): string => `s_${name.replace(/[^A-Za-z0-9_]/g, '_')}`;
  const lines = ['flowchart TD'];
  for (const node of definition.nodes) {
    const label = node.name === definition.returns ? `${node.name} ⟶ returns` : node.name;
    lines.push(`  ${SHAPES[node.kind](id(node.name), label.replace(/"/g, "'"))}`);
  }
  for (const node of definition.nodes) {
    for (const dep of node.dependsOn) {
      const arrow = node.waitFor.includes(dep) && !readsResult(node, dep) ? '-.->' : '-->';
      lines.push(`  ${id(dep)} ${arrow} ${id(node.name)}`);
    }
  }
  return lines.join('\n');
}

function readsResult(node: GraphNode, step: string): boolean {
  const args = node.kind === 'map' ? { source: node.source } : (node.args ?? {});
  return Object.values(args).some((a) => a.source.kind === 'result' && a.source.step === step);
}
