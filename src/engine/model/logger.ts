import type { Logger } from '../../dsl/context.js';

/** A logger that drops everything (the default: ts-reactor is quiet unless given a logger). */
export const silentLogger: Logger = Object.freeze({ debug() {}, info() {}, warn() {}, error() {} });

/** A logger that adds `fields` to every entry (pino's `child` when available). */
export function childLogger(logger: Logger, fields: Record<string, unknown>): Logger {
  const withChild = logger as Logger & { child?: (bindings: Record<string, unknown>) => Logger };
  if (typeof withChild.child === 'function') return withChild.child(fields);
  if (logger === silentLogger) return logger;
  const wrap =
    (level: keyof Logger) =>
    (entry: object | string, message?: string): void => {
      if (typeof entry === 'string') logger[level]({ ...fields }, entry);
      else logger[level]({ ...fields, ...entry }, message);
    };
  return { debug: wrap('debug'), info: wrap('info'), warn: wrap('warn'), error: wrap('error') };
}
