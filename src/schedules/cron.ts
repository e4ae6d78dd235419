/**
 * The cron evaluator: the `cron-parser` that BullMQ's job schedulers use when `bullmq` is
 * installed (BullMQ 5 brings cron-parser 4, BullMQ 6 cron-parser 5, whose rules at a few
 * daylight-saving edges differ), else ts-reactor's own. So the ticks ts-reactor computes (next
 * runs, missed ticks) are the instants BullMQ fires, on either major version.
 *
 * @module
 */
import { createRequire } from 'node:module';
import cronParser from 'cron-parser';

/** An expression's iterator: each `next()` is the next matching instant. */
export interface CronIterator {
  next(): { getTime(): number };
}

/** Parses `pattern` from `currentDate` (default now) in the zone `tz`; throws on a bad pattern. */
export type ParseCron = (
  pattern: string,
  options: { readonly currentDate?: Date; readonly tz: string },
) => CronIterator;

/** cron-parser 4's entry point, or cron-parser 5's. */
interface CronParserModule {
  readonly parseExpression?: (pattern: string, options: object) => CronIterator;
  readonly CronExpressionParser?: { parse(pattern: string, options: object): CronIterator };
  readonly default?: CronParserModule;
}

/** The parse function of a loaded cron-parser of either major version, or undefined. */
function parseOf(module: CronParserModule | undefined): ParseCron | undefined {
  if (!module) return undefined;
  const parser = module.CronExpressionParser;
  if (parser && typeof parser.parse === 'function') return (pattern, options) => parser.parse(pattern, { ...options });
  const parse = module.parseExpression;
  if (typeof parse === 'function') return (pattern, options) => parse(pattern, { ...options });
  return module.default === module ? undefined : parseOf(module.default);
}

/** The cron-parser `bullmq` resolves (its own dependency), when bullmq is installed. */
function bullmqCronParser(): CronParserModule | undefined {
  try {
    const here = createRequire(import.meta.url);
    return createRequire(here.resolve('bullmq'))('cron-parser') as CronParserModule;
  } catch {
    return undefined;
  }
}

/** Parses a cron expression with BullMQ's cron-parser when there is one, else with ts-reactor's. */
export const parseCron: ParseCron =
  parseOf(bullmqCronParser()) ?? ((pattern, options) => cronParser.parseExpression(pattern, { ...options }));
