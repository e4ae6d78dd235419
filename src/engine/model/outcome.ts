import type { FieldIssue } from '../../errors.js';
import type { Suspension } from './suspension.js';

/** Something completed that rollback may have to undo. */
export interface CompletedEntry {
  readonly step: string;
  /** Undoes it, recording failures in the run state; never throws. */
  readonly undo: () => Promise<void>;
}

/** How a node (step, compose, map) ended. */
export type NodeOutcome =
  | { readonly kind: 'success'; readonly value: unknown; readonly entry: CompletedEntry }
  | { readonly kind: 'skipped'; readonly value: unknown }
  | { readonly kind: 'halt'; readonly step: string; readonly reason: string; readonly data?: unknown }
  /** The node suspends the execution (a later attempt, a park, a pause, a sleep): see {@link Suspension}. */
  | { readonly kind: 'yield'; readonly step: string; readonly suspension: Suspension }
  | {
      readonly kind: 'failure';
      readonly step: string;
      readonly error: Error;
      readonly validation: readonly FieldIssue[];
      /** Present when the body started: compensates it (never throws). */
      readonly compensate: (() => Promise<void>) | undefined;
    };
