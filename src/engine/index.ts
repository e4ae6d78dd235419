export * from './engine.js';
export * from './events.js';
export { silentLogger, childLogger } from './logger.js';
export * from './ports/index.js';
export * from './results.js';
export type { ResumeOptions, ResumeTarget } from './interrupt/resume.js';
