export * from './clock.js';
export * from './coordinator.js';
export * from './queue.js';
export * from './store.js';
export * from './fanout.js';
export * from './interrupt-claims.js';
export * from './inspector.js';
export * from './job-lease.js';
