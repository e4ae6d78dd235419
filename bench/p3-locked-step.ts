/**
 * P3: an uncontended locked reactor on Redis, run sequentially. A one-step reactor with a
 * reactor-level `withLock` runs on `createEngine({ store: new MemoryStore(), coordinator })`
 * with the coordinator of `createRedisBackend` — the memory store keeps the execution record off
 * Redis, so what reaches Redis is the lock alone. Anchor, measured in the same run against the
 * same throwaway server: the raw floor — a Lua `SET NX PX` acquire plus a Lua compare-and-delete
 * release, EVALSHA by a plain ioredis client, one pair after another.
 *
 * Figures: throughput of the subject / throughput of the floor (median of per-round ratios;
 * target ≥ 0.8), and Redis round trips per locked run (target 2: acquire, release). Two
 * diagnostic contenders split the subject's cost: the same reactor without the lock (engine
 * alone) and the coordinator's acquire + release called directly (no engine). Within each round
 * the contenders alternate in chunks so load from elsewhere on the machine hits them alike.
 *
 * Round trips are counted on the server: `INFO commandstats` counts the commands a Lua script
 * issues (`redis.call`) as well as the ones a client sends, so its sum over all entries is *not*
 * the round-trip count. The commandstats delta is printed as it is (with the EVALSHA CPU per
 * call), and the round trips are read from a `MONITOR` pass, which tells each command's source
 * (the subject's connection vs `lua`), cross-checked with a count of the commands the subject's
 * connection wrote during the timed rounds.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { createEngine, MemoryStore, reactor, type AnyReactorDefinition } from '../src/index.js';
import { createRedisBackend } from '../src/storage/redis/index.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { emit, median, round, type Verdict } from './support/runner.js';

const ROUNDS = 5;
const OPS_PER_ROUND = 2_000;
const CHUNK_OPS = 250;
const WARMUP_OPS = 500;
const MONITOR_OPS = 200;
const TARGET_RATIO = 0.8;
const TARGET_ROUND_TRIPS = 2;
const LOCK_KEY = 'bench:lock';
const TTL_MS = 30_000;

// The anchor's two scripts: benchmark anchors, not product scripts.
const ANCHOR_ACQUIRE = "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0";
const ANCHOR_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
const ANCHOR_KEY = 'p3:anchor:lock';
const COORDINATOR_KEY = 'bench:direct';

/** One `cmdstat_*` line of `INFO commandstats`. */
interface CommandStat {
  readonly calls: number;
  readonly usec: number;
  readonly failed: number;
}
type CommandStats = ReadonlyMap<string, CommandStat>;

function parseCommandStats(info: string): CommandStats {
  const stats = new Map<string, CommandStat>();
  for (const line of info.split(/\r?\n/)) {
    const match = /^cmdstat_([^:]+):(.*)$/.exec(line);
    if (!match) continue;
    const fields = new Map(match[2]!.split(',').map((pair) => pair.split('=') as [string, string]));
    stats.set(match[1]!, {
      calls: Number(fields.get('calls') ?? 0),
      usec: Number(fields.get('usec') ?? 0),
      failed: Number(fields.get('failed_calls') ?? 0),
    });
  }
  return stats;
}

/** after − before, per command, without `INFO` itself and without commands that did not move. */
function statsDelta(before: CommandStats, after: CommandStats): Map<string, CommandStat> {
  const delta = new Map<string, CommandStat>();
  for (const [name, a] of after) {
    if (name === 'info') continue;
    const b = before.get(name) ?? { calls: 0, usec: 0, failed: 0 };
    if (a.calls === b.calls) continue;
    delta.set(name, { calls: a.calls - b.calls, usec: a.usec - b.usec, failed: a.failed - b.failed });
  }
  return delta;
}

function addInto(total: Map<string, CommandStat>, delta: ReadonlyMap<string, CommandStat>): void {
  for (const [name, d] of delta) {
    const t = total.get(name) ?? { calls: 0, usec: 0, failed: 0 };
    total.set(name, { calls: t.calls + d.calls, usec: t.usec + d.usec, failed: t.failed + d.failed });
  }
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Per-run (per-pair) view of a commandstats delta over `ops` operations. */
function describeDelta(delta: ReadonlyMap<string, CommandStat>, ops: number): Record<string, unknown> {
  const evalsha = delta.get('evalsha') ?? { calls: 0, usec: 0, failed: 0 };
  const total = [...delta.values()].reduce((sum, d) => sum + d.calls, 0);
  return {
    ops,
    commandstats_calls_per_op: round(total / ops, 3),
    evalsha_calls_per_op: round(evalsha.calls / ops, 3),
    evalsha_usec_per_call: evalsha.calls === 0 ? null : round(evalsha.usec / evalsha.calls, 2),
    evalsha_usec_per_op: round(evalsha.usec / ops, 2),
    failed_calls: [...delta.values()].reduce((sum, d) => sum + d.failed, 0),
    per_command: Object.fromEntries(
      [...delta]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, d]) => [
          name,
          { calls_per_op: round(d.calls / ops, 3), usec_per_call: round(d.usec / d.calls, 2) },
        ]),
    ),
  };
}

function lockedReactor(): AnyReactorDefinition {
  return reactor('p3-locked')
    .withLock({ key: () => LOCK_KEY, ttl: '30s', wait: 0 })
    .step('work', { run: () => 1 })
    .returns('work');
}

/** The same reactor without the lock (diagnostic: the engine's own cost). */
function unlockedReactor(): AnyReactorDefinition {
  return reactor('p3-unlocked')
    .step('work', { run: () => 1 })
    .returns('work');
}

/** Counts the commands a connection writes (client side), wrapping its `sendCommand`. */
function countCommands(connection: Redis): { readonly count: () => number } {
  let count = 0;
  const original = connection.sendCommand.bind(connection);
  connection.sendCommand = (...args: Parameters<Redis['sendCommand']>) => {
    count++;
    return original(...args);
  };
  return { count: () => count };
}

/** Runs P3 and returns its verdict. */
export async function runP3(): Promise<Verdict> {
  const server = await startRedisServer();
  const backend = createRedisBackend({ url: server.url });
  const anchor = new Redis(server.url, { maxRetriesPerRequest: 3 });
  const stats = new Redis(server.url, { maxRetriesPerRequest: 3 });
  try {
    await Promise.all([backend.redis.ping(), anchor.ping(), stats.ping()]); // connected before counting anything
    const engine = createEngine({ store: new MemoryStore(), coordinator: backend.coordinator });
    const definition = lockedReactor();
    const acquireSha = (await anchor.script('LOAD', ANCHOR_ACQUIRE)) as string;
    const releaseSha = (await anchor.script('LOAD', ANCHOR_RELEASE)) as string;

    const subjectOp = async (): Promise<void> => {
      const result = await engine.run(definition, {});
      if (result.status !== 'completed')
        throw new Error(
          `P3 locked reactor did not complete: ${result.status}${result.status === 'failed' ? ` (${result.error.message})` : ''}`,
        );
    };
    const anchorOp = async (): Promise<void> => {
      const token = randomUUID();
      if ((await anchor.evalsha(acquireSha, 1, ANCHOR_KEY, token, TTL_MS)) !== 1)
        throw new Error('P3 anchor: acquire refused on a free key');
      if ((await anchor.evalsha(releaseSha, 1, ANCHOR_KEY, token)) !== 1)
        throw new Error('P3 anchor: release found another token');
    };
    // Two diagnostic contenders split the subject's cost (not part of the verdict): the same
    // reactor without the lock (engine alone, no Redis), and the coordinator's lock acquire +
    // release called directly (product scripts, key building and reply decoding, no engine).
    const unlocked = unlockedReactor();
    const engineOnlyOp = async (): Promise<void> => {
      const result = await engine.run(unlocked, {});
      if (result.status !== 'completed') throw new Error(`P3 unlocked reactor did not complete: ${result.status}`);
    };
    const coordinatorOp = async (): Promise<void> => {
      const owner = randomUUID();
      const acquired = await backend.coordinator.lockAcquire({
        key: COORDINATOR_KEY,
        holder: { owner, executionId: owner, reactor: 'p3-direct' },
        ttlMs: TTL_MS,
      });
      if (!acquired.acquired) throw new Error('P3 coordinator: acquire refused on a free key');
      await backend.coordinator.lockRelease(COORDINATOR_KEY, owner);
    };
    const contenders = {
      subject: subjectOp,
      anchor: anchorOp,
      engine_unlocked: engineOnlyOp,
      coordinator_direct: coordinatorOp,
    } as const;
    type Name = keyof typeof contenders;
    const names = Object.keys(contenders) as Name[];

    for (let i = 0; i < WARMUP_OPS; i++) for (const name of names) await contenders[name](); // JIT, script cache (NOSCRIPT → EVAL once)

    const snapshot = async (): Promise<CommandStats> => parseCommandStats(await stats.info('commandstats'));
    const clientCount = countCommands(backend.redis);
    const perName = <T>(make: () => T): Record<Name, T> =>
      Object.fromEntries(names.map((n) => [n, make()])) as Record<Name, T>;
    const latencies = perName<number[]>(() => []);
    const opsPerSecond = perName<number[]>(() => []);
    const cpuMicros = perName(() => 0); // this process's CPU (user + system), summed over the timed chunks
    const totals = perName(() => new Map<string, CommandStat>());
    let subjectClientCommands = 0;
    const ratios: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // Within a round the contenders alternate in chunks, so load from elsewhere on the machine hits them alike.
      const elapsed = perName(() => 0);
      const roundDelta = perName(() => new Map<string, CommandStat>());
      for (let chunk = 0; chunk < OPS_PER_ROUND / CHUNK_OPS; chunk++) {
        for (const name of names) {
          const op = contenders[name];
          const before = await snapshot();
          const commandsBefore = clientCount.count();
          const cpuBefore = process.cpuUsage();
          const start = performance.now();
          for (let i = 0; i < CHUNK_OPS; i++) {
            const t0 = performance.now();
            await op();
            latencies[name].push(performance.now() - t0);
          }
          elapsed[name] += performance.now() - start;
          const cpu = process.cpuUsage(cpuBefore);
          cpuMicros[name] += cpu.user + cpu.system;
          if (name === 'subject') subjectClientCommands += clientCount.count() - commandsBefore;
          addInto(roundDelta[name], statsDelta(before, await snapshot()));
        }
      }
      for (const name of names) {
        addInto(totals[name], roundDelta[name]);
        opsPerSecond[name].push((OPS_PER_ROUND * 1000) / elapsed[name]);
        emit({
          bench: 'P3',
          figure: 'round',
          round: r + 1,
          contender: name,
          ops_per_s: round(opsPerSecond[name].at(-1)!, 0),
          ...describeDelta(roundDelta[name], OPS_PER_ROUND),
        });
      }
      ratios.push(opsPerSecond.subject.at(-1)! / opsPerSecond.anchor.at(-1)!);
    }
    const timedRuns = ROUNDS * OPS_PER_ROUND;
    const clientCommandsPerRun = subjectClientCommands / timedRuns;
    emit({
      bench: 'P3',
      figure: 'client_commands_per_run',
      value: round(clientCommandsPerRun, 3),
      runs: timedRuns,
      note: 'commands written by the subject connection (ioredis sendCommand) during the subject loops',
    });

    // Server-side round trips: MONITOR tells a command sent by the subject's connection from one a script ran.
    const subjectAddress = `${backend.redis.stream.localAddress ?? '127.0.0.1'}:${backend.redis.stream.localPort ?? 0}`;
    const monitor = await stats.monitor(); // a new connection; resolves once MONITOR is acknowledged
    const seen = new Map<string, number>();
    let fromSubject = 0;
    let fromLua = 0;
    let markerSeen: (() => void) | undefined;
    const marker = `p3:monitor-end:${randomUUID()}`;
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua') return void fromLua++;
      if (source !== subjectAddress) return;
      if (args[0]?.toLowerCase() === 'echo' && args[1] === marker) return markerSeen?.();
      fromSubject++;
      const command = args[0]?.toLowerCase() ?? '?';
      seen.set(command, (seen.get(command) ?? 0) + 1);
    });
    const drained = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('P3: the MONITOR feed did not catch up within 10 s')), 10_000);
      markerSeen = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    for (let i = 0; i < MONITOR_OPS; i++) await subjectOp();
    await backend.redis.echo(marker); // the feed is in order: once the marker shows up, every subject command has
    await drained;
    monitor.disconnect();
    const roundTripsPerRun = fromSubject / MONITOR_OPS;
    emit({
      bench: 'P3',
      figure: 'round_trips_per_run',
      value: round(roundTripsPerRun, 3),
      target: TARGET_ROUND_TRIPS,
      runs: MONITOR_OPS,
      by_command_per_run: Object.fromEntries([...seen].map(([c, n]) => [c, round(n / MONITOR_OPS, 3)])),
      lua_nested_calls_per_run: round(fromLua / MONITOR_OPS, 3),
      source: 'MONITOR, commands from the subject connection',
    });

    const subjectDelta = describeDelta(totals.subject, timedRuns);
    const anchorDelta = describeDelta(totals.anchor, timedRuns);
    emit({
      bench: 'P3',
      figure: 'commandstats_delta',
      contender: 'subject',
      ...subjectDelta,
      note: 'sum of calls includes commands run inside Lua scripts (redis.call), so it exceeds the round trips',
    });
    emit({ bench: 'P3', figure: 'commandstats_delta', contender: 'anchor', ...anchorDelta });
    const lat = (name: Name) => ({
      p50_ms: round(percentile(latencies[name], 50), 3),
      p99_ms: round(percentile(latencies[name], 99), 3),
    });
    const subjectOps = median(opsPerSecond.subject);
    const anchorOps = median(opsPerSecond.anchor);
    emit({
      bench: 'P3',
      figure: 'subject_runs_per_s',
      value: round(subjectOps, 0),
      rounds: opsPerSecond.subject.map((v) => round(v, 0)),
      ...lat('subject'),
    });
    emit({
      bench: 'P3',
      figure: 'anchor_pairs_per_s',
      value: round(anchorOps, 0),
      rounds: opsPerSecond.anchor.map((v) => round(v, 0)),
      ...lat('anchor'),
    });
    emit({
      bench: 'P3',
      figure: 'lua_cpu_usec_per_evalsha',
      subject: subjectDelta.evalsha_usec_per_call,
      anchor: anchorDelta.evalsha_usec_per_call,
      subject_usec_per_run: subjectDelta.evalsha_usec_per_op,
      anchor_usec_per_pair: anchorDelta.evalsha_usec_per_op,
    });
    // Where the subject's time goes, in µs per operation (medians of the rounds, same run).
    const us = (name: Name): number => 1e6 / median(opsPerSecond[name]);
    emit({
      bench: 'P3',
      figure: 'cost_breakdown_us',
      subject_run: round(us('subject'), 1),
      anchor_pair: round(us('anchor'), 1),
      coordinator_direct_pair: round(us('coordinator_direct'), 1),
      engine_unlocked_run: round(us('engine_unlocked'), 1),
      coordinator_over_anchor: round(us('coordinator_direct') - us('anchor'), 1),
      lock_glue: round(us('subject') - us('coordinator_direct') - us('engine_unlocked'), 1),
      p50_ms: { coordinator_direct: lat('coordinator_direct').p50_ms, engine_unlocked: lat('engine_unlocked').p50_ms },
      note: 'coordinator_over_anchor = product scripts + keys + decoding vs the raw floor; lock_glue = subject − coordinator pair − unlocked run (admission, holds, keep-alive timer, events)',
    });

    // Client CPU per operation (µs, user + system of this process: JS, ioredis, and the socket
    // syscalls, which on a virtual machine include waking the server's vCPU). On loopback the
    // floor is bound by this CPU more than by the wire, so it bounds what any engine can reach.
    const cpuPerOp = (name: Name): number => cpuMicros[name] / timedRuns;
    emit({
      bench: 'P3',
      figure: 'client_cpu_us_per_op',
      subject: round(cpuPerOp('subject'), 1),
      anchor: round(cpuPerOp('anchor'), 1),
      engine_unlocked: round(cpuPerOp('engine_unlocked'), 1),
      coordinator_direct: round(cpuPerOp('coordinator_direct'), 1),
    });
    // Upper bound of the ratio for this machine, this engine and these scripts: a locked run
    // costs at least the floor pair, plus the same run without the lock, plus the server time
    // our lock scripts take beyond the floor's (fencing token, holder, nesting, notification;
    // Redis runs them serially inside the round trips). The target needs the whole locked run
    // within (1/0.8 − 1) × the floor pair above it.
    const scriptExtraUs = Math.max(
      0,
      Number(subjectDelta.evalsha_usec_per_op) - Number(anchorDelta.evalsha_usec_per_op),
    );
    emit({
      bench: 'P3',
      figure: 'reachable_bound',
      value: round(us('anchor') / (us('anchor') + us('engine_unlocked') + scriptExtraUs), 3),
      without_script_time: round(us('anchor') / (us('anchor') + us('engine_unlocked')), 3),
      engine_budget_us: round(us('anchor') * (1 / TARGET_RATIO - 1), 1),
      engine_unlocked_run_us: round(us('engine_unlocked'), 1),
      script_server_time_over_floor_us: round(scriptExtraUs, 1),
      engine_over_budget_us: round(us('subject') - us('anchor') - us('anchor') * (1 / TARGET_RATIO - 1), 1),
      note: "value = floor pair / (floor pair + the unlocked run + our scripts' extra server time): the best ratio any lock glue could reach with this engine and these scripts; engine_budget_us = what the whole locked run may cost above the floor for the target",
    });

    const ratio = median(ratios);
    const roundTrips = Math.max(roundTripsPerRun, clientCommandsPerRun);
    const verdict = {
      bench: 'P3',
      metric: 'throughput_vs_raw_floor',
      value: round(ratio, 3),
      target: `>= ${TARGET_RATIO}`,
      anchor: {
        raw_pairs_per_s: round(anchorOps, 0),
        ...lat('anchor'),
        lua_usec_per_evalsha: anchorDelta.evalsha_usec_per_call,
        subject_runs_per_s: round(subjectOps, 0),
        subject_p50_ms: lat('subject').p50_ms,
        subject_lua_usec_per_evalsha: subjectDelta.evalsha_usec_per_call,
        ratio_of_medians: round(subjectOps / anchorOps, 3),
        rounds: ROUNDS,
        ops_per_round: OPS_PER_ROUND,
        redis: 'throwaway redis-server, loopback',
      },
      round_trips_per_run: round(roundTrips, 3),
      round_trips_target: TARGET_ROUND_TRIPS,
      pass: ratio >= TARGET_RATIO && roundTrips <= TARGET_ROUND_TRIPS,
    };
    return verdict;
  } finally {
    await backend.close().catch(() => undefined);
    anchor.disconnect();
    stats.disconnect();
    await server.dispose();
  }
}
