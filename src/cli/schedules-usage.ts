/**
 * The usage text of `ts-reactor schedules` (apart from the command, which loads BullMQ).
 *
 * @module
 */

/** Usage of `ts-reactor schedules`. */
export const SCHEDULES_USAGE = `  schedules list [--runs <n>] [--queue <name>]
  schedules add <id> --reactor <name> (--cron <pattern> [--tz <zone>] | --every <duration>)
                [--input <json> | --input-from <name>] [--missed skip|catch_up_one]
                [--start-at <time>] [--end-at <time>] [--module <path>] [--queue <name>]
  schedules remove <id> [--queue <name>]
                        the schedules on Redis: their reactor, cron or interval and next runs`;
