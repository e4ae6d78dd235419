/**
 * The shape check an input passes before its contract runs: nested at most
 * {@link MAX_INPUT_DEPTH} levels deep and free of cycles, so that validating, storing and logging
 * it cannot overflow the stack (docs/limits.md). The walk is iterative: a deep input cannot
 * overflow the check itself.
 *
 * @module
 */

/** How deeply objects and arrays may nest in an execution's input. */
export const MAX_INPUT_DEPTH = 100;

/** What is wrong with an input's shape: where, and why. */
export interface InputShapeIssue {
  /** Dotted path of the value that is too deep or repeats an enclosing one (`a.b.0.c`). */
  readonly path: string;
  readonly message: string;
}

interface Frame {
  readonly value: object;
  readonly path: readonly (string | number)[];
  readonly ancestors: readonly object[];
}

/** The first problem with `input`'s shape, or undefined when it nests at most `limit` levels and has no cycle. */
export function inputShapeIssue(input: unknown, limit: number = MAX_INPUT_DEPTH): InputShapeIssue | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const stack: Frame[] = [{ value: input, path: [], ancestors: [] }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    const { value, path, ancestors } = frame;
    if (ancestors.includes(value))
      return { path: path.join('.'), message: 'the input refers to itself (a cycle): it cannot be stored' };
    if (path.length >= limit)
      return {
        path: path.join('.'),
        message: `the input nests more than ${limit} levels deep; flatten it or pass a reference to the data`,
      };
    const inner = [...ancestors, value];
    for (const [key, child] of Object.entries(value))
      if (typeof child === 'object' && child !== null)
        stack.push({
          value: child as object,
          path: [...path, Array.isArray(value) ? Number(key) : key],
          ancestors: inner,
        });
  }
  return undefined;
}
