/**
 * GraphQL over WebSocket for tests: a graphql-ws client with a token in `connection_init` that never
 * retries, and a turnEvents subscription that collects what the debugger sees.
 */
import { print } from 'graphql';
import { createClient, type Client, type ClientOptions } from 'graphql-ws';
import WebSocket from 'ws';
import {
  TurnEventsDocument,
  type TurnEventsSubscription,
  type TurnEventsSubscriptionVariables,
} from '../generated/graphql.js';

/**
 * A graphql-ws client of `wsUrl` with `token` (if any) in `connection_init`, no retries, connecting
 * at once unless `options` say `lazy: true`; `options` go over these.
 */
export function wsClient(wsUrl: string, token: string | null, options: Partial<ClientOptions> = {}): Client {
  return createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: token === null ? {} : { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    lazy: false,
    ...options,
  });
}

export type DebugEvent = TurnEventsSubscription['turnEvents'];

export interface EventStream {
  events: DebugEvent[];
  errors: unknown[];
  /** Resolves when `predicate` holds for the events received so far (a bound, not an assertion: 20 s by default). */
  waitFor(predicate: (events: DebugEvent[]) => boolean, timeoutMs?: number): Promise<DebugEvent[]>;
  close(): Promise<void>;
}

/** Subscribes to turnEvents over graphql-ws with a token from connection_init. */
export async function subscribeTurnEvents(
  wsUrl: string,
  token: string,
  variables: TurnEventsSubscriptionVariables,
): Promise<EventStream> {
  const client = wsClient(wsUrl, token);
  const events: DebugEvent[] = [];
  const errors: unknown[] = [];
  const listeners = new Set<() => void>();
  await new Promise<void>((resolve, reject) => {
    client.on('connected', () => resolve());
    client.on('closed', (e) => reject(new Error(`closed before connecting: ${JSON.stringify(e)}`)));
  });
  client.subscribe<TurnEventsSubscription>(
    { query: print(TurnEventsDocument), variables },
    {
      next: (value) => {
        if (value.data) events.push(value.data.turnEvents);
        if (value.errors) errors.push(...value.errors);
        for (const l of listeners) l();
      },
      error: (err) => {
        errors.push(err);
        for (const l of listeners) l();
      },
      complete: () => undefined,
    },
  );
  return {
    events,
    errors,
    waitFor: (predicate, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (predicate(events)) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(events);
          } else if (errors.length > 0) {
            listeners.delete(check);
            clearTimeout(timer);
            reject(new Error(`subscription error: ${JSON.stringify(errors)}`));
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out; got ${JSON.stringify(events.map((e) => [e.seq, e.type]))}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      }),
    close: () => client.dispose() as Promise<void>,
  };
}
