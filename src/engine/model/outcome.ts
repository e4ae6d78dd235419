import type { FieldIssue } from '../../errors.js';
import type { FanOutPark } from './fanout/wait.js';
import type { InterruptWait } from '../ports/store.js';

/** Something completed that rollback may have to undo. */
export interface CompletedEntry {
  readonly step: string;
  /** Undoes it, recording failures in the run state; never throws. */
  readonly undo: () => Promise<void>;
}

/** A sleep step the execution waits at: its path and its wake time (engine clock, ms). */
export interface SleepWait {
  readonly step: string;
  readonly wakeAt: number;
}

/** How a node (step, compose, map) ended. */
export type NodeOutcome =
  | { readonly kind: 'success'; readonly value: unknown; readonly entry: CompletedEntry }
  | { readonly kind: 'skipped'; readonly value: unknown }
  | { readonly kind: 'halt'; readonly step: string; readonly reason: string; readonly data?: unknown }
  /** Worker mode: the step wants another attempt later; the execution is re-enqueued. */
  /** Worker mode: a later attempt (a retry delay), or — with `contention` — a park until the busy key is released. */
  | {
      readonly kind: 'yield';
      readonly step: string;
      readonly delayMs: number;
      readonly contention?: Error;
      readonly fanOut?: FanOutPark;
      readonly pause?: readonly InterruptWait[];
      /** A sleep step waits until its wake time: a worker parks the execution; inline, it hands off. */
      readonly sleep?: SleepWait;
    }
  | {
      readonly kind: 'failure';
      readonly step: string;
      readonly error: Error;
      readonly validation: readonly FieldIssue[];
      /** Present when the body started: compensates it (never throws). */
      readonly compensate: (() => Promise<void>) | undefined;
    };
