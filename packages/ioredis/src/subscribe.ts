// The change feed's subscriber connection for ioredis (and iovalkey): a `duplicate()` of the app's
// connection, or on a Cluster of one of its nodes' connections (PUBLISH reaches every node of a
// Cluster, so any one node hears every change). It never reconnects by itself: the store opens a
// new one after a loss, and starts it by telling the caches that messages may have been missed.
import type { RedisSubscriber, SubscriberEvents } from '@floodgate/core/redis';
import type { Cluster, Redis, RedisOptions } from 'ioredis';

type Client = Redis | Cluster;

const noop = (): void => {};

/** The connection to duplicate: the client itself, or a random node of a Cluster it knows. */
function baseOf(client: Client): Redis | undefined {
  if ((client as Partial<Cluster>).isCluster !== true) return client as Redis;
  const nodes = (client as Cluster).nodes('all');
  return nodes[Math.floor(Math.random() * nodes.length)];
}

type Subscribe = (channel: string, events: SubscriberEvents) => Promise<RedisSubscriber>;

// One per client: the stores built on it share its change feed's connection (core changes.ts).
const perClient = new WeakMap<Client, Subscribe>();

/** `RedisTransport.subscribe` for an ioredis `Redis` or `Cluster`, the same one per client. */
export function ioredisSubscribe(client: Client): Subscribe {
  let subscribe = perClient.get(client);
  if (subscribe === undefined) {
    subscribe = subscriberOf(client);
    perClient.set(client, subscribe);
  }
  return subscribe;
}

function subscriberOf(client: Client): Subscribe {
  return async (channel: string, events: SubscriberEvents): Promise<RedisSubscriber> => {
    const base = baseOf(client);
    // A Cluster that has not connected yet knows no node: the store asks again later.
    if (base === undefined) throw new Error('no cluster node known yet');
    const options: Partial<RedisOptions> = {
      lazyConnect: true,
      // One connection, one life: a reconnect would hide what was published while it was away.
      retryStrategy: () => null,
      reconnectOnError: null,
      autoResubscribe: false,
      enableOfflineQueue: true,
      // The channel is not a key: no prefix of the app's keys applies to it.
      keyPrefix: '',
    };
    const sub = base.duplicate(options);
    let live = false;
    let done = false;
    const finish = (): void => {
      done = true;
      client.removeListener('end', appClosed);
      sub.removeAllListeners('close');
      sub.removeAllListeners('end');
    };
    const lost = (): void => {
      if (done || !live) return;
      finish();
      sub.disconnect();
      events.lost();
    };
    // The app closed its client: the subscriber goes with it.
    const appClosed = lost;
    sub.on('error', noop);
    sub.on('close', lost);
    sub.on('end', lost);
    sub.on('message', (from: string, text: string) => {
      if (from === channel) events.message(text);
    });
    client.on('end', appClosed);
    try {
      await sub.connect();
      // The subscriber never keeps the process alive: the app's own client decides that.
      sub.stream?.unref?.();
      await sub.subscribe(channel);
    } catch (error) {
      finish();
      sub.disconnect();
      throw error;
    }
    if (sub.status !== 'ready' || client.status === 'end') {
      finish();
      sub.disconnect();
      throw new Error('the subscriber (or the app client) closed while subscribing');
    }
    live = true;
    return {
      ping: () => sub.ping(),
      close: () => {
        if (done) return;
        finish();
        sub.disconnect();
      },
    };
  };
}
