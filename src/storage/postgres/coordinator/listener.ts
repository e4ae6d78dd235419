/**
 * The one LISTEN connection of a Postgres coordinator: it listens on the schema's coordination
 * channel, reconnects when the connection is lost, and says when it is listening (at first and
 * again after every reconnect: what was notified meanwhile passed this process by).
 *
 * @module
 */
import type { Client, Notification } from 'pg';

/** How long the connection may be down before the wake-ups count as degraded (ms). */
export const DEGRADED_AFTER_MS = 1_000;
/** How often a listening connection is checked with `SELECT 1` (ms). */
export const PING_EVERY_MS = 5_000;
/** A check unanswered for this long counts the connection as lost (ms). */
export const PING_TIMEOUT_MS = 3_000;
/** How long a new LISTEN connection may take to connect and LISTEN before it counts as lost (ms). */
export const CONNECT_TIMEOUT_MS = 5_000;
/** How long closing waits for a connection to end (a frozen server never answers) (ms). */
const END_WITHIN_MS = 1_000;
/** Waits between reconnect attempts: doubling from the first to the last (ms). */
const RECONNECT_MS = [50, 100, 200, 400, 800, 1_600] as const;

/** What a {@link NotificationListener} tells its owner. */
export interface ListenerEvents {
  /** A notification on the channel: its payload. */
  readonly onNotification: (payload: string) => void;
  /** LISTEN took effect (first, or again after a reconnect): notifications before it were missed. */
  readonly onListening: () => void;
  /** The wake-ups became degraded (down past {@link DEGRADED_AFTER_MS}) or recovered. */
  readonly onDegraded: (degraded: boolean, detail: string | undefined) => void;
}

/**
 * A dedicated connection that LISTENs on one channel. Started by {@link NotificationListener.start}
 * (idempotent); from then on it keeps listening, reconnecting with backoff, until
 * {@link NotificationListener.close}.
 */
export class NotificationListener {
  readonly #connect: () => Client;
  readonly #channel: string;
  readonly #events: ListenerEvents;
  #client: Client | undefined;
  #started = false;
  #closed = false;
  #listening = false;
  /** Resolvers of {@link NotificationListener.listening}. */
  #waiting: (() => void)[] = [];
  #attempt = 0;
  #retry: NodeJS.Timeout | undefined;
  #ping: NodeJS.Timeout | undefined;
  #degradedTimer: NodeJS.Timeout | undefined;
  #degraded = false;
  #lastProblem: string | undefined;

  /**
   * @param connect - Makes a new, unconnected client (each connection attempt makes one).
   * @param channel - The channel to LISTEN on (any text up to 63 bytes; quoted here).
   * @param events - Where notifications, confirmations and health changes go.
   */
  constructor(connect: () => Client, channel: string, events: ListenerEvents) {
    this.#connect = connect;
    this.#channel = channel;
    this.#events = events;
  }

  /** Whether LISTEN is in effect on a live connection now. */
  get isListening(): boolean {
    return this.#listening;
  }

  /** Whether the wake-ups are degraded: not listening for longer than {@link DEGRADED_AFTER_MS}. */
  get degraded(): boolean {
    return this.#degraded;
  }

  /** Starts listening if not started yet. */
  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    this.#armDegraded();
    void this.#open();
  }

  /** Starts listening and resolves once LISTEN is in effect (or at close). */
  listening(): Promise<void> {
    this.start();
    if (this.#listening || this.#closed) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Stops listening and ends the connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listening = false;
    clearTimeout(this.#retry);
    clearInterval(this.#ping);
    clearTimeout(this.#degradedTimer);
    for (const resolve of this.#waiting.splice(0)) resolve();
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) await endWithin(client, END_WITHIN_MS);
  }

  async #open(): Promise<void> {
    if (this.#closed) return;
    let client: Client;
    try {
      client = this.#connect();
    } catch (error) {
      this.#retryLater(error);
      return;
    }
    this.#client = client;
    const lost = (error?: unknown): void => this.#lost(client, error);
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (message: Notification) => {
      if (message.channel === this.#channel && message.payload !== undefined)
        this.#events.onNotification(message.payload);
    });
    // A server that accepts the connection but never answers (frozen) must not stall us for good.
    const guard = setTimeout(() => lost(new Error('the LISTEN connection was not made in time')), CONNECT_TIMEOUT_MS);
    guard.unref();
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdentifier(this.#channel)}`);
    } catch (error) {
      lost(error);
      return;
    } finally {
      clearTimeout(guard);
    }
    if (this.#client !== client || this.#closed) return;
    this.#attempt = 0;
    this.#listening = true;
    this.#lastProblem = undefined;
    clearTimeout(this.#degradedTimer);
    this.#degradedTimer = undefined;
    if (this.#degraded) {
      this.#degraded = false;
      this.#events.onDegraded(false, undefined);
    }
    this.#ping = setInterval(() => this.#check(client), PING_EVERY_MS);
    this.#ping.unref();
    for (const resolve of this.#waiting.splice(0)) resolve();
    this.#events.onListening();
  }

  /** A connection was lost (or never made): drop it and try again after a backoff. */
  #lost(client: Client, error?: unknown): void {
    if (this.#client !== client || this.#closed) return;
    this.#client = undefined;
    this.#listening = false;
    clearInterval(this.#ping);
    void endWithin(client, END_WITHIN_MS);
    this.#retryLater(error ?? new Error('connection ended'));
  }

  /** Opens a new connection after the next backoff. */
  #retryLater(error: unknown): void {
    this.#lastProblem = error instanceof Error ? error.message : String(error);
    this.#armDegraded();
    const wait = RECONNECT_MS[Math.min(this.#attempt, RECONNECT_MS.length - 1)];
    this.#attempt += 1;
    this.#retry = setTimeout(() => void this.#open(), wait);
    this.#retry.unref();
  }

  /** A `SELECT 1` on the listening connection: one that does not answer in time is lost. */
  #check(client: Client): void {
    const timer = setTimeout(
      () => this.#lost(client, new Error('the LISTEN connection did not answer')),
      PING_TIMEOUT_MS,
    );
    timer.unref();
    client.query('SELECT 1').then(
      () => clearTimeout(timer),
      (error: unknown) => {
        clearTimeout(timer);
        this.#lost(client, error);
      },
    );
  }

  /** Counts the wake-ups as degraded once not listening for {@link DEGRADED_AFTER_MS}. */
  #armDegraded(): void {
    if (this.#degraded || this.#degradedTimer !== undefined) return;
    this.#degradedTimer = setTimeout(() => {
      this.#degradedTimer = undefined;
      if (this.#listening || this.#closed) return;
      this.#degraded = true;
      this.#events.onDegraded(true, `not listening on ${this.#channel}: ${this.#lastProblem ?? 'connecting'}`);
    }, DEGRADED_AFTER_MS);
    this.#degradedTimer.unref();
  }
}

/** Ends `client`, waiting at most `ms` for it (a server that does not answer is not waited for). */
async function endWithin(client: Client, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([client.end().catch(() => undefined), late]);
  clearTimeout(timer);
}

/** Quotes a Postgres identifier (a channel name in LISTEN). */
export function quoteIdentifier(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
