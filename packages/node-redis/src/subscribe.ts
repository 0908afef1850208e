// The change feed's subscriber connection for node-redis: a `duplicate()` of the app's client,
// or on a cluster of one master's client (PUBLISH reaches every node of a Cluster, so any one
// node hears every change). It never reconnects by itself: the store opens a new one after a
// loss, and starts it by telling the caches that messages may have been missed.
import type { RedisSubscriber, SubscriberEvents } from '@floodgate/core/redis';

/** What the subscriber needs of a node-redis client, in every generation the store takes. */
interface Subscribable {
  duplicate(overrides?: object): Subscribable;
  connect(): Promise<unknown>;
  disconnect(): Promise<unknown>;
  subscribe(
    channel: string,
    listener: (message: string, channel: string) => void,
  ): Promise<unknown>;
  ping?(): Promise<unknown>;
  unref?(): void;
  on(event: string, fn: (...args: unknown[]) => void): unknown;
  removeListener(event: string, fn: (...args: unknown[]) => void): unknown;
  readonly options?: { socket?: object; legacyMode?: boolean };
  readonly isPubSubActive?: boolean;
}

/** A cluster, as far as finding a master's client goes (`nodeClient` from redis 4.6 on). */
interface ClusterNodes {
  getMasters(): { client?: unknown }[];
  nodeClient?(node: unknown): unknown;
}

const noop = (): void => {};

/** Closes `sub` whatever it says (redis 5 throws at once for a client already closed). */
function drop(sub: Subscribable): void {
  try {
    sub.disconnect().catch(noop);
  } catch {}
}

/** The client to duplicate: the client itself, or a random master's of a cluster. */
async function baseOf(client: unknown, cluster: boolean): Promise<Subscribable | undefined> {
  if (!cluster) return client as Subscribable;
  const c = client as ClusterNodes;
  const masters = c.getMasters();
  const master = masters[Math.floor(Math.random() * masters.length)];
  if (master === undefined) return undefined;
  const found = typeof c.nodeClient === 'function' ? await c.nodeClient(master) : master.client;
  return found as Subscribable | undefined;
}

type Subscribe = (channel: string, events: SubscriberEvents) => Promise<RedisSubscriber>;

// One per client: the stores built on it share its change feed's connection (core changes.ts).
const perClient = new WeakMap<object, Subscribe>();

/** `RedisTransport.subscribe` for a node-redis client or cluster, the same one per client. */
export function nodeRedisSubscribe(client: unknown, cluster: boolean): Subscribe {
  let subscribe = perClient.get(client as object);
  if (subscribe === undefined) {
    subscribe = subscriberOf(client, cluster);
    perClient.set(client as object, subscribe);
  }
  return subscribe;
}

function subscriberOf(client: unknown, cluster: boolean): Subscribe {
  const app = client as Partial<Subscribable>;
  return async (channel: string, events: SubscriberEvents): Promise<RedisSubscriber> => {
    const base = await baseOf(client, cluster);
    if (base === undefined || typeof base.duplicate !== 'function') {
      throw new Error('no connection to duplicate yet');
    }
    const sub = base.duplicate({
      // The promise API, whatever the app's client uses (node-redis 4's legacyMode).
      ...(base.options?.legacyMode === true ? { legacyMode: false } : {}),
      // One connection, one life: a reconnect would hide what was published while it was away.
      socket: { ...base.options?.socket, reconnectStrategy: () => new Error('not reconnecting') },
    });
    let live = false;
    let done = false;
    const finish = (): void => {
      done = true;
      app.removeListener?.('end', appClosed);
      for (const e of ['end', 'error', 'reconnecting']) sub.removeListener(e, lost);
    };
    const lost = (): void => {
      if (done || !live) return;
      finish();
      drop(sub);
      events.lost();
    };
    // The app closed its client: the subscriber goes with it.
    const appClosed = lost;
    sub.on('error', noop);
    for (const e of ['end', 'error', 'reconnecting']) sub.on(e, lost);
    app.on?.('end', appClosed);
    try {
      await sub.connect();
      // The subscriber never keeps the process alive: the app's own client decides that.
      sub.unref?.();
      await sub.subscribe(channel, (message, from) => {
        if (from === undefined || from === channel) events.message(message);
      });
    } catch (error) {
      finish();
      drop(sub);
      throw error;
    }
    live = true;
    // PING while subscribed: from node-redis 4.6 on (which has isPubSubActive); 1.x refuses it.
    const ping = 'isPubSubActive' in sub && typeof sub.ping === 'function';
    return {
      ...(ping ? { ping: () => sub.ping!() } : {}),
      close: () => {
        if (done) return;
        finish();
        drop(sub);
      },
    };
  };
}
