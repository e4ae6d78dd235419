/**
 * The read model operators use (the dashboard, its JSON API, the CLI): executions and live
 * coordination state over a Store and a Coordinator, and the ordered-lock operator actions.
 *
 * @module
 */
import type { AnyReactorDefinition } from '../dsl/definition.js';
import type { Coordinator } from '../ports/coordinator.js';
import type { Store } from '../ports/store.js';
import { ReactorError } from '../errors.js';
import { coordinationView, orderedView, type CoordinationQuery } from './coordination.js';
import { executionDetail, listExecutions, shownInput, type ExecutionSources } from './executions.js';
import { SEARCH_WINDOW, searchExecutions } from './search.js';
import { definitionsOf } from './versions.js';
import type {
  CoordinationView,
  ExecutionDetail,
  ExecutionPage,
  ExecutionQuery,
  ExecutionSearch,
  OrderedView,
  SearchResult,
} from './types.js';

/** Options of {@link createReadModel}. */
export interface ReadModelOptions {
  readonly store: Store;
  /** Needed for the coordination view, wait details and ordered-lock actions. */
  readonly coordinator?: Coordinator;
  /**
   * Reactor definitions: their graphs are drawn and their redacted fields hidden. Give every
   * version still running: an execution is drawn from its own version's definition; the last
   * given of a name is its current one.
   */
  readonly reactors?: readonly AnyReactorDefinition[];
  /** How many of the newest records are searched for linked executions (default 1000). */
  readonly scanLimit?: number;
  /** How many of the newest records a search reads for matches beyond its exact lookups (default 1000). */
  readonly searchWindow?: number;
}

/** Read access to executions and coordination state. */
export interface ReadModel {
  executions(query?: ExecutionQuery): Promise<ExecutionPage>;
  execution(id: string): Promise<ExecutionDetail | undefined>;
  /**
   * Executions whose id, idempotency key (under a registered reactor, or `search.reactor`) or
   * interrupt correlation id is `search.q`, found through the store's lookups; then those among
   * the newest `searchWindow` records whose idempotency key or correlation id is `q`, or whose
   * redacted input contains it (case-insensitive). @throws ReactorError `query_invalid` on an empty or oversized `q`.
   */
  search(search: ExecutionSearch): Promise<SearchResult>;
  coordination(query?: CoordinationQuery): Promise<CoordinationView>;
  /** An ordered lock's cursor and waiters. */
  orderedLock(key: string): Promise<OrderedView>;
  /** Operator action: pass over the ordered lock's head position. */
  orderedSkip(key: string): Promise<OrderedView>;
  /** Operator action: a new epoch; outstanding positions become stale. */
  orderedReset(key: string): Promise<OrderedView>;
  /** The registered definition of a reactor. */
  reactor(name: string): AnyReactorDefinition | undefined;
  /** The names of the registered reactors, sorted. */
  reactorNames(): readonly string[];
}

/**
 * Creates the read model.
 *
 * @example
 * ```ts
 * const model = createReadModel({ store, coordinator, reactors: [checkout] });
 * const parked = await model.executions({ status: 'parked' });
 * const view = await model.coordination({ pattern: 'account:*' });
 * ```
 */
export function createReadModel(options: ReadModelOptions): ReadModel {
  const { byName: reactors, byFingerprint: versions } = definitionsOf(options.reactors ?? []);
  const sources: ExecutionSources = {
    store: options.store,
    coordinator: options.coordinator,
    reactors,
    versions,
    scanLimit: options.scanLimit ?? 1000,
  };
  const coordinator = (): Coordinator =>
    options.coordinator ??
    (() => {
      throw new ReactorError(
        'coordinator_missing',
        'the read model has no coordinator: pass one to see coordination state',
      );
    })();
  const byKey = (key: string): string => {
    if (typeof key !== 'string' || key.length === 0)
      throw new ReactorError('query_invalid', 'an ordered-lock key must be a non-empty string', { details: { key } });
    return key;
  };
  return {
    executions: (query) => listExecutions(sources, query),
    execution: (id) => executionDetail(sources, id),
    search: (search) =>
      searchExecutions(
        {
          store: options.store,
          reactorNames: [...reactors.keys()],
          window: options.searchWindow ?? SEARCH_WINDOW,
          shownInput: (record) => shownInput(record, reactors.get(record.reactor)).input,
        },
        search,
      ),
    coordination: (query) => coordinationView(options.store, coordinator(), query),
    orderedLock: (key) => orderedView(coordinator(), byKey(key)),
    orderedSkip: async (key) => (await coordinator().orderedSkip(byKey(key)), orderedView(coordinator(), key)),
    orderedReset: async (key) => (await coordinator().orderedReset(byKey(key)), orderedView(coordinator(), key)),
    reactor: (name) => reactors.get(name),
    reactorNames: () => [...reactors.keys()].sort(),
  };
}
