import type { Context } from 'hono';
import { describe, expectTypeOf, test } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import type {
  Authorize,
  DashboardPermission,
  ExecutionAction,
  ExecutionDetail,
  InterruptView,
  ReadModel,
} from '../../src/web/index.js';
import { executionActions, resumeAction } from '../../src/web/index.js';

describe('dashboard types', () => {
  test('the authorize hook narrows the permission by kind and returns a verdict', () => {
    const authorize: Authorize = (c, permission) => {
      expectTypeOf(c).toEqualTypeOf<Context>();
      if (permission.kind === 'view') {
        expectTypeOf(permission.page).toEqualTypeOf<
          'executions' | 'execution' | 'coordination' | 'schedules' | 'queue' | 'events'
        >();
        return true;
      }
      expectTypeOf(permission.action).toEqualTypeOf<string>();
      if (permission.target.type === 'ordered-lock') expectTypeOf(permission.target.key).toEqualTypeOf<string>();
      return Promise.resolve('unauthenticated' as const);
    };
    expectTypeOf(authorize).parameter(1).toEqualTypeOf<DashboardPermission>();
    // @ts-expect-error a verdict is true, false or 'unauthenticated'
    const wrong: Authorize = () => 'maybe';
    void wrong;
  });

  test('an added action gets the engine, the execution detail and its fields', () => {
    const resume: ExecutionAction = {
      name: 'resume',
      label: 'Resume',
      description: 'Resumes a paused execution with a payload.',
      appliesTo: (e) => e.status === 'paused',
      fields: [{ name: 'payload', label: 'Payload', kind: 'json', required: true }],
      perform: async ({ engine, execution, fields }) => {
        expectTypeOf(engine).toEqualTypeOf<Engine>();
        expectTypeOf(execution).toEqualTypeOf<ExecutionDetail>();
        expectTypeOf(fields).toEqualTypeOf<Readonly<Record<string, unknown>>>();
        return { executionId: execution.id, status: execution.status };
      },
    };
    void resume;
  });

  test('the built-in resume action is an execution action; a paused execution lists its interrupts', () => {
    expectTypeOf(resumeAction).toEqualTypeOf<ExecutionAction>();
    expectTypeOf(executionActions).toEqualTypeOf<readonly ExecutionAction[]>();
    expectTypeOf<ExecutionDetail['interrupts']>().toEqualTypeOf<readonly InterruptView[] | undefined>();
    expectTypeOf<InterruptView['maxAttempts']>().toEqualTypeOf<number | undefined>();
  });

  test('the read model returns typed views', () => {
    expectTypeOf<ReadModel['execution']>().returns.resolves.toEqualTypeOf<ExecutionDetail | undefined>();
    expectTypeOf<Awaited<ReturnType<ReadModel['coordination']>>['locks'][number]['level']>().toEqualTypeOf<
      'step' | 'reactor'
    >();
  });
});
