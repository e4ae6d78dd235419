export * from './clock.js';
export * from './coordinator.js';
export * from './store.js';
