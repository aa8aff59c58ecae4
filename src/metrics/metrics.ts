/**
 * The service's Prometheus metrics (`GET /metrics`, docs/metrics.md), one registry per app so that
 * two instances in one process (tests) never mix their counts.
 *
 * Label values are bounded: statuses, outcomes, error codes and routes come from fixed sets of
 * ours; connection ids come from the database, and past MAX_CONNECTION_LABELS distinct ids further
 * ones share the label `other`; a connection is labelled with the ID the API shows. Nothing a caller or a model wrote (arguments, names, workspace
 * names) ever becomes a label.
 *
 * The call path only increments: state that other modules already keep (cache hits, the LISTEN
 * connection, the database pool, open subscriptions) is read when Prometheus scrapes.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { toGlobalId } from '../graphql/node.js';

export const METRICS_PREFIX = 'connected_tools_';
/** Distinct connection ids given their own label; later ones are counted under `other`. */
export const MAX_CONNECTION_LABELS = 1_000;
/** Label of calls that never reached a connection (unknown tool, switched off before the call). */
export const NO_CONNECTION = 'none';
/** Seconds; tool calls are budgeted 10 s per attempt by default. */
const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** What the scrape reads from the rest of the service (all cheap, all synchronous). */
export interface MetricSources {
  toolCache(): { hits: number; misses: number; size: number };
  notifier(): { healthy: boolean; lastNotificationAt: number | null; reconnects: number };
  pool(): { used: number; free: number; pending: number } | null;
  subscriptionsOpen(): number;
  socketsOpen(): number;
  principalCache(): { valid: number; refused: number };
}

export class Metrics {
  readonly registry = new Registry();
  readonly #calls: Counter<'connection' | 'status'>;
  readonly #callDuration: Histogram<'connection'>;
  readonly #discoveries: Counter<'outcome' | 'code'>;
  readonly #leftOut: Counter<'dialect' | 'reason'>;
  readonly #breakers: Counter<'scope' | 'transition'>;
  readonly #http: Counter<'route' | 'status'>;
  readonly #httpDuration: Histogram<'route'>;
  /** Per connection id, the label it is counted under (itself, or `other` past the cap). */
  readonly #connectionLabels = new Map<string, string>();
  #sources: MetricSources | null = null;

  /**
   * Every metric of `/metrics`, defined in one place: the counted ones, then those read from their
   * source at each scrape. It reads better whole: a list of definitions, one block each, that a
   * reader scans for a name; cut into functions, it would only be harder to scan.
   */
  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.#calls = new Counter({
      name: `${METRICS_PREFIX}tool_calls_total`,
      help: 'Tool calls answered to the runtime, by connection id and call status.',
      labelNames: ['connection', 'status'],
      registers,
    });
    this.#callDuration = new Histogram({
      name: `${METRICS_PREFIX}tool_call_duration_seconds`,
      help: 'Duration of tool calls (all attempts), by connection id.',
      labelNames: ['connection'],
      buckets: CALL_BUCKETS,
      registers,
    });
    this.#leftOut = new Counter({
      name: `${METRICS_PREFIX}declarations_left_out_total`,
      help: "Tools left out of a turn's declared list because its model API would refuse them, by dialect and reason code (issue 26).",
      labelNames: ['dialect', 'reason'],
      registers,
    });
    this.#breakers = new Counter({
      name: `${METRICS_PREFIX}breaker_transitions_total`,
      help: 'Circuit breakers this instance opened, reopened after a failed probe, or closed, by scope (CONNECTION, OPERATION).',
      labelNames: ['scope', 'transition'],
      registers,
    });
    this.#discoveries = new Counter({
      name: `${METRICS_PREFIX}discovery_runs_total`,
      help: 'Finished discovery runs, by outcome and error code (empty when it succeeded).',
      labelNames: ['outcome', 'code'],
      registers,
    });
    this.#http = new Counter({
      name: `${METRICS_PREFIX}http_requests_total`,
      help: 'HTTP requests, by route and status code.',
      labelNames: ['route', 'status'],
      registers,
    });
    this.#httpDuration = new Histogram({
      name: `${METRICS_PREFIX}http_request_duration_seconds`,
      help: 'Duration of HTTP requests, by route.',
      labelNames: ['route'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    const sources = (): MetricSources | null => this.#sources;
    new Counter({
      name: `${METRICS_PREFIX}tool_cache_hits_total`,
      help: 'Tool-cache lookups answered from memory.',
      registers,
      collect() {
        const s = sources();
        if (s) setCounter(this, s.toolCache().hits);
      },
    });
    new Counter({
      name: `${METRICS_PREFIX}tool_cache_misses_total`,
      help: 'Tool-cache lookups that read the database (cold, invalidated, or LISTEN down).',
      registers,
      collect() {
        const s = sources();
        if (s) setCounter(this, s.toolCache().misses);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}tool_cache_assistants`,
      help: 'Assistants whose tools are cached.',
      registers,
      collect() {
        const s = sources();
        if (s) this.set(s.toolCache().size);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}listen_connected`,
      help: '1 while the LISTEN connection (cache invalidation, revocations, debugger events) is up.',
      registers,
      collect() {
        const s = sources();
        if (s) this.set(s.notifier().healthy ? 1 : 0);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}listen_last_notification_age_seconds`,
      help: 'Seconds since the last NOTIFY arrived on the LISTEN connection (-1: none yet).',
      registers,
      collect() {
        const s = sources();
        if (!s) return;
        const at = s.notifier().lastNotificationAt;
        this.set(at === null ? -1 : (Date.now() - at) / 1000);
      },
    });
    new Counter({
      name: `${METRICS_PREFIX}listen_reconnects_total`,
      help: 'Times the LISTEN connection was opened again after it dropped.',
      registers,
      collect() {
        const s = sources();
        if (s) setCounter(this, s.notifier().reconnects);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}db_pool_connections`,
      help: 'Database pool connections: used, free, and acquisitions waiting (pending).',
      labelNames: ['state'],
      registers,
      collect() {
        const pool = sources()?.pool();
        if (!pool) return;
        this.set({ state: 'used' }, pool.used);
        this.set({ state: 'free' }, pool.free);
        this.set({ state: 'pending' }, pool.pending);
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}subscriptions_open`,
      help: 'GraphQL subscriptions open on this instance.',
      registers,
      collect() {
        const s = sources();
        if (s) this.set(s.subscriptionsOpen());
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}websockets_open`,
      help: 'graphql-ws sockets open on this instance.',
      registers,
      collect() {
        const s = sources();
        if (s) this.set(s.socketsOpen());
      },
    });
    new Gauge({
      name: `${METRICS_PREFIX}principal_cache_entries`,
      help: 'Token lookups cached: of valid tokens, and apart, of refused ones.',
      labelNames: ['kind'],
      registers,
      collect() {
        const sizes = sources()?.principalCache();
        if (!sizes) return;
        this.set({ kind: 'valid' }, sizes.valid);
        this.set({ kind: 'refused' }, sizes.refused);
      },
    });
    // Process metrics, among them nodejs_eventloop_lag_seconds and the event-loop delay percentiles.
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
  }

  /** Wires the read-at-scrape sources (app.ts, once the services exist). */
  attach(sources: MetricSources): void {
    this.#sources = sources;
  }

  /** One tool call answered to the runtime. `durationMs` covers every attempt. */
  toolCall(connectionId: string | null, status: string, durationMs: number): void {
    const connection = this.#connectionLabel(connectionId);
    this.#calls.inc({ connection, status });
    this.#callDuration.observe({ connection }, durationMs / 1000);
  }

  /** One tool left out of a turn's list (dialect and reason come from fixed sets of ours). */
  declarationLeftOut(dialect: string, reason: string, count = 1): void {
    this.#leftOut.inc({ dialect, reason }, count);
  }

  /** A breaker moved (src/guards/call-guard.ts): `opened`, `reopened` or `closed`. */
  breakerTransition(scope: string, transition: 'opened' | 'reopened' | 'closed'): void {
    this.#breakers.inc({ scope, transition });
  }

  /** One finished discovery run. */
  discoveryRun(outcome: string, code: string | null): void {
    this.#discoveries.inc({ outcome, code: code ?? '' });
  }

  /** One answered HTTP request; `route` must come from a fixed set (see routeOf in http/request-log.ts). */
  httpRequest(route: string, status: number, durationMs: number): void {
    this.#http.inc({ route, status: String(status) });
    this.#httpDuration.observe({ route }, durationMs / 1000);
  }

  /** The Prometheus text exposition of every metric. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  #connectionLabel(connectionId: string | null): string {
    if (connectionId === null) return NO_CONNECTION;
    const known = this.#connectionLabels.get(connectionId);
    if (known !== undefined) return known;
    if (this.#connectionLabels.size >= MAX_CONNECTION_LABELS) return 'other';
    // The ID the API shows, so a series can be looked up with `connection(id)`.
    const label = toGlobalId('Connection', connectionId);
    this.#connectionLabels.set(connectionId, label);
    return label;
  }
}

/** A counter whose running total lives elsewhere: set it to that total at scrape time. */
function setCounter(counter: Counter, total: number): void {
  counter.reset();
  if (total > 0) counter.inc(total);
}
