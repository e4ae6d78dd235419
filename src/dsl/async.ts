/**
 * Definition-side refusals of `asyncStep` and `asyncReactor`. The options of an inline
 * `asyncStep` (`AsyncStepOptions`, an inline step without `undo`) are declared with the other
 * options of the builder in `reactor/options.ts`.
 *
 * @module
 */

/** Why an inline `asyncStep` may not declare `undo`. */
export function asyncUndoRefusal(name: string): string {
  return `asyncStep "${name}" declares undo, which would never run: an async unit is not undone by its dispatcher's rollback. Use compensate (it runs in the unit's own job when its last attempt fails), or make it a .step`;
}

/**
 * Why an `asyncReactor` child is refused at definition, or undefined when it is a built reactor
 * with a name of its own (workers find reactors by name, so a child named like its dispatcher
 * would stand in for it).
 */
export function asyncChildRefusal(dispatcher: string, name: string, child: unknown): string | undefined {
  const c = child as { kind?: unknown; name?: unknown } | null | undefined;
  if (typeof c !== 'object' || c === null || c.kind !== 'reactor')
    return `asyncReactor "${name}" needs a built reactor (reactor(...).build() or .returns(...)), got ${c === null ? 'null' : typeof c === 'object' ? 'another object' : typeof c}`;
  if (c.name === dispatcher)
    return `asyncReactor "${name}" dispatches a reactor named "${dispatcher}" like its dispatcher; workers find reactors by name, so give the child a name of its own`;
  return undefined;
}

/**
 * The options of `asyncReactor`: its placement (`args`, `waitFor`) and `cancelChildren`.
 *
 * @example
 * ```ts
 * .asyncReactor('audit', auditTrail, { args: ($) => ({ orderId: $.input('orderId') }), cancelChildren: false })
 * ```
 */
export type AsyncReactorOptions<P> = P & {
  /**
   * Cancelling the dispatching execution (an operator's cancel, a cascade from its own parent,
   * its `deadline`) cancels this child first while it is unfinished, and waits for its rollback
   * before the dispatcher's own undos. `false`: the child is left to run. Default `true`.
   */
  readonly cancelChildren?: boolean;
};
