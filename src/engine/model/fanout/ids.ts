/**
 * Names of a fan-out map's pieces: the ledger id, the element records and their jobs. Every id
 * derives from the parent execution and the map step, so a redelivery recomputes the same ids.
 *
 * @module
 */

/** The ledger id of the map `step` of execution `parentId`. */
export const mapIdOf = (parentId: string, step: string): string => `${parentId}/${step}`;

/** The record id of element `index` of a map. */
export const elementIdOf = (parentId: string, step: string, index: number): string =>
  `${mapIdOf(parentId, step)}[${index}]`;

/** The step path of element `index` inside the parent (`items[3]`), as in-process maps name it. */
export const elementPathOf = (step: string, index: number): string => `${step}[${index}]`;

/** The first job of an element (later retries are `<elementId>:<n>`). */
export const elementRunJobId = (elementId: string): string => `${elementId}:1`;

/** The job that undoes a completed element during the map's rollback. */
export const elementUndoJobId = (elementId: string): string => `${elementId}:undo`;
