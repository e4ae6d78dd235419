/**
 * Which node of a Redis Cluster a subscriber connection connects to (docs/decisions/113). Any
 * node will do: the cluster forwards every `PUBLISH` to all its nodes. At each (re)connect the
 * subscriber takes the first node of the current topology that it has not lost, so a connection
 * lost with its node (a master killed, its machine gone) comes back on another node instead of
 * retrying the dead address; once every node was lost, the one lost longest ago comes first.
 *
 * The connector is an ioredis `Connector`: a `Redis` created with it keeps its own reconnect
 * loop (`retryStrategy`), its status and its events, only the address changes between attempts.
 *
 * @module
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { AbstractConnector, type RedisOptions } from 'ioredis';

/** A node's address. */
export interface NodeAddress {
  readonly host: string;
  readonly port: number;
}

/** The nodes a subscriber may connect to now, in order of preference (the current topology). */
export type NodeSource = () => readonly NodeAddress[];

const keyOf = (node: NodeAddress): string => `${node.host}:${node.port}`;

/**
 * The choice of a node among candidates: nodes never lost first, in the candidates' order; then
 * the ones lost longest ago. A node counts as lost when a connection to it closed or could not be
 * made.
 */
export class NodeChoice {
  /** Each lost node's key, with the sequence number of its last loss. */
  readonly #lost = new Map<string, number>();
  #losses = 0;

  /** The node to connect to among `candidates`; undefined when there is none. */
  next(candidates: readonly NodeAddress[]): NodeAddress | undefined {
    let best: NodeAddress | undefined;
    let bestLoss = Infinity;
    for (const node of candidates) {
      const loss = this.#lost.get(keyOf(node)) ?? -1;
      if (loss === -1) return node;
      if (loss < bestLoss) [best, bestLoss] = [node, loss];
    }
    return best;
  }

  /** A connection to `node` closed, or could not be made. */
  lost(node: NodeAddress): void {
    this.#lost.set(keyOf(node), ++this.#losses);
  }
}

/** The options the connector reads (those of the `Redis` it connects). */
type ConnectOptions = Pick<RedisOptions, 'family' | 'tls'>;

/**
 * An ioredis `Connector` class whose connections go to the node `nodes` and the shared choice
 * name at each connect. Pass it as the `Connector` option of a `Redis`.
 */
export function topologyConnector(
  nodes: NodeSource,
  choice = new NodeChoice(),
): new (options: unknown) => AbstractConnector {
  return class TopologyConnector extends AbstractConnector {
    readonly #options: ConnectOptions;

    constructor(options: unknown) {
      const given = options as ConnectOptions & { disconnectTimeout?: number };
      super(given.disconnectTimeout ?? 2_000);
      this.#options = given;
    }

    connect(): Promise<Socket | TLSSocket> {
      this.connecting = true;
      return new Promise((resolve, reject) => {
        // Like ioredis's own connector: the stream is made on the next tick, unless disconnected meanwhile.
        process.nextTick(() => {
          if (!this.connecting) return reject(new Error('Connection is closed.'));
          const node = choice.next(nodes());
          if (node === undefined) return reject(new Error('no node of the cluster to connect the subscriber to'));
          let stream: Socket | TLSSocket;
          try {
            stream = this.#open(node);
          } catch (error) {
            return reject(error instanceof Error ? error : new Error(String(error)));
          }
          stream.once('error', (error: Error) => {
            this.firstError = error;
          });
          stream.once('close', () => choice.lost(node)); // the next attempt tries another node first
          this.stream = stream;
          resolve(stream);
        });
      });
    }

    #open(node: NodeAddress): Socket | TLSSocket {
      const { family, tls } = this.#options;
      const address = { host: node.host, port: node.port, ...(family === undefined ? {} : { family }) };
      if (tls === undefined) return netConnect(address);
      return tlsConnect({ ...address, ...tls });
    }
  };
}
