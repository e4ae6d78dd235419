/**
 * A TCP proxy in front of a throwaway `redis-server` that holds back the second `INFO` of each
 * client connection until told to let it through. ioredis sends one `INFO` as its ready check;
 * a second one on the same connection is BullMQ's Redis version check, the last step of its
 * connection set-up. Holding it keeps that set-up in flight for as long as a test needs
 * (docs/decisions/055). Real sockets, real server: only the timing is chosen.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

/** A running proxy. */
export interface InfoHoldingProxy {
  /** `redis://127.0.0.1:<proxy port>`. */
  readonly url: string;
  /** Connections whose second INFO is being held. */
  held(): number;
  /** Resolves once `count` connections have their second INFO held. */
  untilHeld(count: number): Promise<void>;
  /** Resolves when a client closes a connection whose INFO is held (its set-up was cut short). */
  heldClosed(): Promise<void>;
  /** Lets every held INFO through, and holds no more. */
  release(): void;
  /** Client connections still open. */
  open(): number;
  /** Stops listening and drops every connection. */
  close(): Promise<void>;
}

const INFO = Buffer.from('*1\r\n$4\r\ninfo\r\n');

interface Link {
  readonly client: Socket;
  readonly upstream: Socket;
  infos: number;
  /** Bytes from the client held back (from the second INFO on); undefined when not holding. */
  held: Buffer[] | undefined;
}

/** Starts a proxy to `127.0.0.1:<targetPort>` on a free port. */
export async function startInfoHoldingProxy(targetPort: number): Promise<InfoHoldingProxy> {
  const links = new Set<Link>();
  let holding = true;
  const changed = new Set<() => void>();
  const notify = (): void => [...changed].forEach((listener) => listener());
  let onHeldClosed: (() => void) | undefined;
  const heldClosed = new Promise<void>((resolve) => (onHeldClosed = resolve));

  const forward = (link: Link, chunk: Buffer): void => {
    if (link.held) return void link.held.push(chunk);
    for (let at = chunk.indexOf(INFO); at !== -1; at = chunk.indexOf(INFO, at + INFO.length)) {
      link.infos += 1;
      if (link.infos === 2 && holding) {
        link.upstream.write(chunk.subarray(0, at));
        link.held = [chunk.subarray(at)];
        notify();
        return;
      }
    }
    link.upstream.write(chunk);
  };

  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    const link: Link = { client, upstream, infos: 0, held: undefined };
    links.add(link);
    client.on('data', (chunk: Buffer) => forward(link, chunk));
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const drop = (): void => {
      if (!links.delete(link)) return;
      if (link.held) onHeldClosed?.();
      client.destroy();
      upstream.destroy();
      notify();
    };
    client.on('close', drop).on('error', drop);
    upstream.on('close', drop).on('error', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const heldCount = (): number => [...links].filter((l) => l.held !== undefined).length;

  return {
    url: `redis://127.0.0.1:${port}`,
    held: heldCount,
    untilHeld: (count) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (heldCount() < count) return;
          changed.delete(check);
          resolve();
        };
        changed.add(check);
        check();
      }),
    heldClosed: () => heldClosed,
    release: () => {
      holding = false;
      for (const link of links) {
        const held = link.held;
        link.held = undefined;
        for (const chunk of held ?? []) link.upstream.write(chunk);
      }
    },
    open: () => links.size,
    close: async () => {
      for (const link of links) {
        link.client.destroy();
        link.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
