/**
 * The spans open in this process, by execution: the frames (run spans, and the enqueue span of
 * a new execution) and the nested spans (steps, compensations, undos) by step path. Events find
 * their span here; a nested span finds its parent by walking up its path.
 *
 * @module
 */
import type { Span } from '@opentelemetry/api';
import type { ErrorJSON } from '../errors.js';

/** An open span and what events told it so far. */
export interface OpenSpan {
  readonly span: Span;
  /** The outcome the events reported (run frames). */
  outcome?: string;
  /** The error of a failed outcome. */
  error?: ErrorJSON;
}

/** Nested span kinds. */
export type NestedKind = 'step' | 'compensate' | 'undo';

const nestedKey = (kind: NestedKind, executionId: string, path: string): string =>
  `${kind}\u0000${executionId}\u0000${path}`;

/** The proper ancestors of a step path, nearest first: `a.b[2].c` → `a.b[2]`, `a.b`, `a`. */
export function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let i = path.length - 1; i > 0; i--) {
    const c = path[i];
    if (c === '.' || c === '[') out.push(path.slice(0, i));
  }
  return out;
}

/** Open spans of this process. */
export class OpenSpans {
  readonly #frames = new Map<string, OpenSpan[]>();
  readonly #nested = new Map<string, OpenSpan>();

  /** The innermost open frame of an execution. */
  frame(executionId: string): OpenSpan | undefined {
    const frames = this.#frames.get(executionId);
    return frames?.[frames.length - 1];
  }

  /** Opens a frame; returns the function that closes it. */
  pushFrame(executionId: string, open: OpenSpan): () => void {
    const frames = this.#frames.get(executionId) ?? [];
    frames.push(open);
    this.#frames.set(executionId, frames);
    return () => {
      const i = frames.indexOf(open);
      if (i >= 0) frames.splice(i, 1);
      if (frames.length === 0 && this.#frames.get(executionId) === frames) this.#frames.delete(executionId);
    };
  }

  /** The open nested span of `kind` at `path`. */
  nested(kind: NestedKind, executionId: string, path: string): OpenSpan | undefined {
    return this.#nested.get(nestedKey(kind, executionId, path));
  }

  /** Registers a nested span; returns the function that removes it. */
  addNested(kind: NestedKind, executionId: string, path: string, open: OpenSpan): () => void {
    const key = nestedKey(kind, executionId, path);
    this.#nested.set(key, open);
    return () => {
      if (this.#nested.get(key) === open) this.#nested.delete(key);
    };
  }

  /** The span a nested span at `path` belongs under: the nearest open ancestor step, else the frame. */
  parentOf(executionId: string, path: string): OpenSpan | undefined {
    for (const ancestor of ancestors(path)) {
      const open = this.nested('step', executionId, ancestor);
      if (open) return open;
    }
    return this.frame(executionId);
  }

  /** Spans open now (frames and nested). */
  get size(): number {
    let n = this.#nested.size;
    for (const frames of this.#frames.values()) n += frames.length;
    return n;
  }
}
