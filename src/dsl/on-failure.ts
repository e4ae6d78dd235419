/**
 * What a step that fails for good does to its run: the `onFailure` policy of a reactor and of a
 * step (`'rollback'`, the default, or `'pause'` for an operator), and whether an operator may
 * skip the failed step with a value of their own (`skippable`). Validated when the reactor is
 * built (docs/decisions/100).
 *
 * @module
 */
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { DefinitionError } from '../errors.js';

/** `'rollback'`: a step that fails for good rolls the run back. `'pause'`: the run waits `paused` for an operator. */
export type OnFailure = 'rollback' | 'pause';

/** The failure options of a step (inline, or a step definition where it is placed). */
export interface FailureOptions<R> {
  /** This step's failure policy; default: the reactor's `onFailure` (itself `'rollback'` by default). */
  readonly onFailure?: OnFailure;
  /**
   * Whether an operator may continue a run paused on this step's failure with a value of their
   * own (`engine.skipStep`): `true`, or a Standard Schema the value must satisfy. Default: no.
   */
  readonly skippable?: boolean | StandardSchemaV1<R>;
}

/** A step an operator may skip: the schema its supplied value is validated against, if any. */
export interface SkipPolicy {
  readonly schema?: StandardSchemaV1 | undefined;
}

const POLICIES: readonly OnFailure[] = ['rollback', 'pause'];

/** The validated `onFailure` of a reactor (default `'rollback'`). */
export function onFailureOf(value: unknown, where: { readonly reactor: string; readonly step?: string }): OnFailure {
  if (value === undefined) return 'rollback';
  if (POLICIES.includes(value as OnFailure)) return value as OnFailure;
  throw new DefinitionError(
    `${where.step === undefined ? `reactor "${where.reactor}"` : `step "${where.step}" of reactor "${where.reactor}"`}: onFailure must be 'rollback' or 'pause' (got ${JSON.stringify(value)})`,
    where.reactor,
    where.step,
  );
}

/** The failure fields of a step node from its options (absent ones left out). */
export function failureFields(
  options: FailureOptions<unknown>,
  where: { readonly reactor: string; readonly step: string },
): { onFailure?: OnFailure; skip?: SkipPolicy } {
  const skippable = options.skippable;
  if (skippable !== undefined && typeof skippable !== 'boolean' && !isSchema(skippable))
    throw new DefinitionError(
      `step "${where.step}" of reactor "${where.reactor}": skippable must be true, false or a Standard Schema`,
      where.reactor,
      where.step,
    );
  return {
    ...(options.onFailure === undefined ? {} : { onFailure: onFailureOf(options.onFailure, where) }),
    ...(skippable === undefined || skippable === false
      ? {}
      : { skip: skippable === true ? {} : { schema: skippable } }),
  };
}

function isSchema(value: unknown): value is StandardSchemaV1 {
  const standard = (value as { '~standard'?: { validate?: unknown } } | null)?.['~standard'];
  return typeof standard?.validate === 'function';
}
