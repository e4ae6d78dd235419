/**
 * One element of a map, run with the scheduler's `runFrame` for a reactor element: the entry
 * point of a fan-out element's job (`jobs/fanout/element-job.ts`).
 *
 * @module
 */
import type { MapNode } from '../../dsl/definition.js';
import type { NodeOutcome } from '../model/outcome.js';
import type { RunState } from '../run/run-state.js';
import type { StepPlace } from '../run/step-runner.js';
import { runMapElement } from './nested.js';
import { runFrame } from './scheduler.js';

/** Runs one element of a map (a step definition or a reactor) at `place` (`items[3]`). */
export function runElement(
  run: RunState,
  node: MapNode,
  place: StepPlace,
  item: unknown,
  index: number,
): Promise<NodeOutcome> {
  return runMapElement(run, node, place, item, index, runFrame);
}
