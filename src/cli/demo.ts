/**
 * `ts-reactor demo`: runs a checkout reactor three times on the embedded engine (memory
 * backend, no Redis) and prints what happened, from the engine's events.
 *
 * @module
 */
import { createEmbeddedEngine } from '../embedded.js';
import type { ReactorEvent } from '../engine/model/events.js';
import type { RunResult } from '../engine/model/results.js';
import { checkoutReactor } from './demo-reactor.js';
import { createServices, type ServiceBehaviour } from './demo-services.js';

/** Where the demo writes its lines. */
export type Write = (line: string) => void;

interface Scenario {
  readonly title: string;
  readonly orderId: string;
  readonly country: string;
  readonly behaviour: ServiceBehaviour;
}

const SCENARIOS: readonly Scenario[] = [
  {
    title: '1. Success: reserve-stock and fraud-check run concurrently',
    orderId: 'a-1001',
    country: 'FR',
    behaviour: { pspFailures: 0, carrierRejects: false },
  },
  {
    title: '2. Retry: the payment provider times out once',
    orderId: 'a-1002',
    country: 'FR',
    behaviour: { pspFailures: 1, carrierRejects: false },
  },
  {
    title: '3. Failure: the carrier refuses the parcel, the order rolls back',
    orderId: 'a-1003',
    country: 'AQ',
    behaviour: { pspFailures: 0, carrierRejects: true },
  },
];

/** Runs the three scenarios, writing readable lines to `write`. */
export async function runDemo(write: Write = (line) => console.log(line)): Promise<void> {
  write('ts-reactor demo: a checkout reactor on the embedded engine (memory backend, no Redis)');
  write('');
  write('steps: validate-order -> (reserve-stock | fraud-check) -> charge-card -> ship-order -> notify-customer');
  write('Each line is an engine event as it happens; the indented lines are the fake services talking.');
  for (const scenario of SCENARIOS) {
    write('');
    write(`== ${scenario.title} ==`);
    await runScenario(scenario, write);
  }
}

async function runScenario(scenario: Scenario, write: Write): Promise<void> {
  const checkout = checkoutReactor(createServices(scenario.behaviour, (line) => write(`             ${line}`)));
  const engine = createEmbeddedEngine({ ids: { executionId: () => `exec-${scenario.orderId}` } });
  const printer = new EventPrinter(write);
  const stop = engine.subscribe((event) => printer.print(event));
  try {
    const result = await engine.run(checkout, {
      orderId: scenario.orderId,
      sku: 'mug',
      quantity: 2,
      amountCents: 4200,
      cardToken: 'tok_4242',
      country: scenario.country,
    });
    summarize(result, write);
  } finally {
    stop();
  }
}

/** Formats events one per line; tracks which steps are running to show overlap. */
class EventPrinter {
  readonly #write: Write;
  readonly #running: string[] = [];

  constructor(write: Write) {
    this.#write = write;
  }

  print(event: ReactorEvent): void {
    const line = (verb: string, text: string): void => this.#write(`  ${verb.padEnd(10)} ${text}`);
    switch (event.type) {
      case 'run.started':
        return line('run', `${event.reactor} ${event.executionId} input=${JSON.stringify(event.input)}`);
      case 'step.started': {
        if (!this.#running.includes(event.step)) this.#running.push(event.step);
        const overlap = this.#running.length > 1 ? `   [running at once: ${this.#running.join(', ')}]` : '';
        return line('start', `${event.step} (attempt ${event.attempt})${overlap}`);
      }
      case 'step.succeeded':
        this.#finished(event.step);
        return line('done', event.step);
      case 'step.retrying':
        return line(
          'retry',
          `${event.step}: "${event.error.message}"; attempt ${event.attempt} in ${event.delayMs} ms`,
        );
      case 'step.failed':
        this.#finished(event.step);
        return line('FAILED', `${event.step} after ${event.attempt} attempt(s): ${event.error.message}`);
      case 'step.skipped':
        this.#finished(event.step);
        return line('skipped', `${event.step}: ${event.reason}`);
      case 'step.halted':
        this.#finished(event.step);
        return line('halted', `${event.step}: ${event.reason}`);
      case 'run.rolling_back':
        return line(
          'rollback',
          `because ${String(event.step)} failed: compensate it, then undo completed steps newest first`,
        );
      case 'step.compensated':
        return line('compensate', event.step);
      case 'step.undone':
        return line('undo', event.step);
      case 'step.compensate_failed':
      case 'step.undo_failed':
        return line('ROLLBACK!', `${event.step}: ${event.message} (recorded; rollback goes on)`);
      case 'run.completed':
      case 'run.failed':
      case 'run.halted':
      case 'run.replayed':
        return undefined;
      case 'run.queued':
      case 'run.resumed':
      case 'run.recovered':
      case 'run.stopped':
      case 'run.parked':
      case 'run.woken':
      case 'step.progress':
      case 'run.cancelled':
      case 'run.retried':
      case 'async.dispatched':
      case 'async.refused':
      case 'async.waiting':
      case 'async.retrying':
      case 'async.parked':
      case 'async.completed':
      case 'async.failed':
      case 'async.discarded':
      case 'run.paused':
      case 'interrupt.paused':
      case 'interrupt.resumed':
      case 'interrupt.rejected':
      case 'interrupt.payload_invalid':
      case 'interrupt.timed_out':
      case 'wait.paused':
      case 'wait.resumed':
      case 'wait.timed_out':
      case 'step.timed_out':
      case 'step.attempt_lost':
      case 'run.paused_on_failure':
      case 'failure.retried':
      case 'failure.skipped':
      case 'failure.rolled_back':
      case 'failure.action_refused':
      case 'run.forked':
      case 'step.sleeping':
      case 'step.woke':
      case 'run.deadline_exceeded':
      case 'run.superseded':
      case 'async.child_cancelled':
      case 'run.version_unavailable':
      case 'trace.summarized':
        return line('event', event.type);
      case 'coordination.acquired':
      case 'coordination.released':
      case 'coordination.waiting':
      case 'coordination.contended':
      case 'coordination.denied':
      case 'coordination.extended':
      case 'coordination.lost':
        // The checkout reactor declares no coordination; name such events if they ever appear.
        return line('event', `${event.type}${'step' in event ? ` ${String(event.step)}` : ''}`);
      case 'map.element_dispatched':
      case 'map.element_retrying':
      case 'map.element_parked':
      case 'map.element_completed':
      case 'map.element_failed':
      case 'map.element_skipped':
      case 'map.rollback_dispatched':
      case 'map.element_undone':
      case 'map.element_undo_failed':
        return line('element', `${event.type} ${event.step}[${event.index}]`);
      case 'map.parked':
      case 'map.collected':
        return line('map', `${event.type} ${event.step}`);
    }
  }

  #finished(step: string): void {
    const at = this.#running.indexOf(step);
    if (at >= 0) this.#running.splice(at, 1);
  }
}

function summarize(result: RunResult, write: Write): void {
  const retries = result.trace.filter((e) => e.type === 'step.retrying').length;
  switch (result.status) {
    case 'completed':
      write(`  => completed${retries > 0 ? ` after ${retries} retry(ies)` : ''}: ${JSON.stringify(result.value)}`);
      return;
    case 'failed': {
      const rolledBack = result.trace.flatMap((e) =>
        e.type === 'step.compensated'
          ? [`${e.step} (compensated)`]
          : e.type === 'step.undone'
            ? [`${e.step} (undone)`]
            : [],
      );
      write(`  => failed at ${String(result.failedStep)}: ${result.error.message}`);
      write(
        `     rolled back in this order: ${rolledBack.join(', ')}; rollback failures: ${result.rollbackFailures.length}`,
      );
      return;
    }
    case 'halted':
      write(`  => halted at ${result.haltedStep}: ${result.reason}`);
      return;
    case 'running':
    case 'queued':
    case 'parked':
    case 'paused':
      write(`  => ${result.status}`);
      return;
    case 'cancelled':
      write(`  => cancelled: ${result.reason}`);
      return;
  }
}
