/**
 * The engine's index of starts on events: event name → the registered reactors declaring `.on`
 * of it, each with its trigger. Kept by the registry as reactors are registered (the current
 * definition of a name replaces the triggers of the one before), so a sent event finds its
 * triggers by name without looking at any other reactor (docs/decisions/145).
 *
 * @module
 */
import type { AnyReactorDefinition } from '../../dsl/definition.js';
import type { TriggerSpec } from '../../dsl/trigger.js';

/** A reactor and the trigger that starts it on one event. */
export interface Trigger {
  readonly reactor: AnyReactorDefinition;
  readonly spec: TriggerSpec;
}

/** Event name → reactor name → trigger. */
export class TriggerIndex {
  readonly #byEvent = new Map<string, Map<string, Trigger>>();

  /**
   * Makes `current` the reactor of its name here, in place of `previous` (the name's definition
   * before, if any): the events `previous` started on and `current` does not are dropped; an event
   * both start on keeps the reactor's place in its order.
   */
  replace(previous: AnyReactorDefinition | undefined, current: AnyReactorDefinition): void {
    const events = new Set((current.triggers ?? []).map((spec) => spec.event));
    for (const spec of previous?.triggers ?? []) {
      if (events.has(spec.event)) continue;
      const reactors = this.#byEvent.get(spec.event);
      reactors?.delete(current.name);
      if (reactors?.size === 0) this.#byEvent.delete(spec.event);
    }
    for (const spec of current.triggers ?? []) {
      const reactors = this.#byEvent.get(spec.event) ?? new Map<string, Trigger>();
      reactors.set(current.name, { reactor: current, spec });
      this.#byEvent.set(spec.event, reactors);
    }
  }

  /** The triggers of event `name`, in the order their reactors were first registered. */
  of(name: string): readonly Trigger[] {
    const reactors = this.#byEvent.get(name);
    return reactors === undefined ? [] : [...reactors.values()];
  }
}
