export * from './args.js';
export * from './context.js';
export * from './contract.js';
export * from './coordination.js';
export * from './coordination-of.js';
export * from './duration.js';
export * from './interrupt.js';
export * from './map-result.js';
export * from './reactor.js';
export * from './retry.js';
export * from './signals.js';
export * from './step.js';
export * from './step-timeout.js';
export * from './sleep.js';
export * from './wait-for-event.js';
export * from './wait-for-event-nodes.js';
export type { FailureOptions, OnFailure, SkipPolicy } from './on-failure.js';
export * from './event.js';
export {
  defaultTriggerKey,
  type TriggerEvent,
  type TriggerOptions,
  type TriggerPayload,
  type TriggerSpec,
} from './trigger.js';
export type { CancelOnOptions, CancelOnPayload, CancelOnSpec, MatchableField } from './cancel-on.js';
