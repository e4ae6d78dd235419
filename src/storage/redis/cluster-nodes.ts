/**
 * Cluster startup nodes from text (`--redis-cluster host:port,…`), without loading ioredis (the
 * CLI parses its options before it loads the optional peer dependencies).
 *
 * @module
 */

/**
 * Parses `host:port,host:port,…` (what `--redis-cluster` takes) into startup nodes. Throws a
 * `RangeError` naming the bad entry.
 */
export function parseClusterNodes(spec: string): { host: string; port: number }[] {
  const nodes = spec
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .map((entry) => {
      const at = entry.lastIndexOf(':');
      const host = at > 0 ? entry.slice(0, at) : '';
      const port = Number(entry.slice(at + 1));
      if (host === '' || !Number.isInteger(port) || port < 1 || port > 65535)
        throw new RangeError(`cluster node must be host:port; got ${JSON.stringify(entry)}`);
      return { host, port };
    });
  if (nodes.length === 0)
    throw new RangeError(`cluster nodes must name at least one host:port; got ${JSON.stringify(spec)}`);
  return nodes;
}
