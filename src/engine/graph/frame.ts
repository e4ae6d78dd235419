/**
 * What one graph run is and how it ends: the {@link Frame} the scheduler executes, its
 * {@link GraphOutcome}, and {@link RunFrame}, the scheduler's entry point as nested work
 * (compose, map elements) receives it — so nested work recurses into the scheduler without
 * importing it.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import type { FieldIssue } from '../../errors.js';
import type { CompletedEntry } from '../model/outcome.js';
import type { Suspension } from '../model/suspension.js';
import type { RunState } from '../run/run-state.js';

/** One graph being executed: a reactor with its validated input, at a path inside the run. */
export interface Frame {
  readonly def: AnyReactorDefinition;
  readonly input: Record<string, unknown>;
  /** Prefix of step paths: `''` at the root, `pay.` inside the composed step `pay`. */
  readonly prefix: string;
  /** Aborted when an enclosing frame stops early. */
  readonly signal: AbortSignal;
  /** Root frame of an inline run with a hand-off: stop there and let a worker continue. */
  readonly handoff?: { readonly after: string } | { readonly before: string } | undefined;
  /**
   * The controller of `signal`, when this frame may abort it itself (the root frame of an
   * execution, whose controller nothing else watches once the graph runs): the frame then uses
   * it instead of creating a child controller (docs/decisions/030).
   */
  readonly owned?: AbortController | undefined;
}

/** How a graph ended. On failure, rollback has already run. */
export type GraphOutcome =
  | { readonly status: 'completed'; readonly value: unknown; readonly completed: readonly CompletedEntry[] }
  | { readonly status: 'halted'; readonly step: string; readonly reason: string; readonly data?: unknown }
  /** The execution suspends (nothing is rolled back): each driver handles every kind of {@link Suspension}. */
  | { readonly status: 'yielded'; readonly step: string; readonly suspension: Suspension }
  | {
      readonly status: 'failed';
      readonly step: string | undefined;
      readonly error: Error;
      readonly validation: readonly FieldIssue[];
    };

/** Executes a graph and, if it failed, rolls it back (the scheduler's `runFrame`). */
export type RunFrame = (run: RunState, frame: Frame) => Promise<GraphOutcome>;
