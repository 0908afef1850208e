// The change feed of a Redis store: a reset (or another change a cached denial may not have seen)
// is published on one pub/sub channel by the very script that makes it, and every store that has
// a limiter with a blocked-key cache listens on one subscriber connection of its own. The
// listeners (the caches, wired in ../cache-watch.ts) drop the identity's entry.
//
// PUBLISH, not the sharded SPUBLISH: a sharded channel lives in one slot, and a script may only
// touch its own keys' slot, so the script of each identity would publish on another channel and
// a process would need a subscription on every master. A plain PUBLISH on a Cluster reaches every
// node over the cluster bus, so one subscriber connection to any node hears every change; resets
// and overrides are rare enough for that broadcast to cost nothing that matters.
import type { StoreChange } from '../store-types.js';
import type { RedisSubscriber, RedisTransport, SubscriberEvents } from './transport.js';

/** The channel changes are published on, unless the store's `changes.channel` names another. */
export const DEFAULT_CHANNEL = 'floodgate:changes';

/**
 * A reset: the identity's keys deleted and the change announced in one script run, so a
 * subscriber that hears of it reads the reset state from its next decision on, and there is no
 * window where the keys are gone and the announcement not yet made (or the other way round).
 * `pcall`: a user whose ACL does not allow the channel still resets (Redis 7 gives new users no
 * channel by default); the other processes' caches then keep to their staleness bound.
 */
export const RESET_SOURCE = `-- Floodgate reset
redis.call('DEL', unpack(KEYS))
redis.pcall('PUBLISH', ARGV[1], ARGV[2])
return 1`;

/**
 * What a change of the identity `key` belongs to is announced as: the key up to its hash tag's
 * end, `<prefix>:{<identity>}` (a prefix has no brace, an encoded identity neither).
 */
export function changeMessage(key: string): string {
  const end = key.indexOf('}');
  return end < 0 ? key : key.slice(0, end + 1);
}

/** A message read back; undefined for one that is not `<prefix>:{<identity>}`. */
function parse(text: string): StoreChange | undefined {
  const open = text.indexOf('{');
  if (open < 1 || text[open - 1] !== ':' || !text.endsWith('}')) return undefined;
  return { type: 'identity', prefix: text.slice(0, open - 1), identity: text.slice(open + 1, -1) };
}

/** How often the subscriber is pinged: each reply vouches for everything published before it. */
const HEARTBEAT_MS = 250;
/** A ping unanswered this long: the connection is taken for dead and replaced. */
const PING_TIMEOUT_MS = 3000;
/** Delays between attempts to (re)open the subscriber, doubling up to the last. */
const MIN_RETRY_MS = 100;
const MAX_RETRY_MS = 2000;

const ALIVE: StoreChange = { type: 'alive' };
const DOWN: StoreChange = { type: 'down' };
const MISSED: StoreChange = { type: 'missed' };

/** A timer that never keeps the process alive (runtimes without `unref` have nothing to do). */
function later(fn: () => void, ms: number): ReturnType<typeof setTimeout> {
  const t = setTimeout(fn, ms);
  (t as { unref?: () => void }).unref?.();
  return t;
}

// The feeds of the stores built on one client, by its transports' `subscribe` (an adapter returns
// one per client) and channel: one subscriber connection and one heartbeat for all of them, not
// one per store (an app building a store per limiter opened as many connections, each pinged 4
// times a second, and a listener on the client per store).
const shared = new WeakMap<object, Map<string, ChangeFeed>>();

/**
 * The change feed on `channel` for a store on `transport`: the one the stores on the same client
 * share when its `subscribe` is theirs, else a new one. A listener that joins a feed already open
 * hears its next heartbeat, as one that opened it hears its first.
 */
export function changeFeedFor(transport: RedisTransport, channel: string): ChangeFeed {
  const key = transport.subscribe!;
  let feeds = shared.get(key);
  if (feeds === undefined) {
    feeds = new Map();
    shared.set(key, feeds);
  }
  let feed = feeds.get(channel);
  if (feed === undefined) {
    feed = new ChangeFeed(transport, channel);
    feeds.set(channel, feed);
  }
  return feed;
}

/**
 * One subscriber connection per feed (per client and channel: `changeFeedFor`), opened when the
 * first listener watches and closed when the last one stops; while open, a `PING` every 250 ms
 * (each reply is an `'alive'`). A lost connection is `'down'`, and is replaced (with backoff) by
 * a new one, which starts with `'missed'`: a reconnect never hides the messages published while
 * it was away.
 */
export class ChangeFeed {
  readonly #transport: RedisTransport;
  readonly #channel: string;
  readonly #listeners = new Set<(change: StoreChange) => void>();
  #sub: RedisSubscriber | undefined;
  /** Bumped by every stop: callbacks of an older subscriber or attempt are ignored. */
  #generation = 0;
  /** The generation an attempt to subscribe is in flight for. */
  #pending: number | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #retryMs = MIN_RETRY_MS;
  /** `performance.now()` when the ping in flight was sent; 0 with none in flight. */
  #pingSent = 0;

  constructor(transport: RedisTransport, channel: string) {
    this.#transport = transport;
    this.#channel = channel;
  }

  watch(listener: (change: StoreChange) => void): () => void {
    this.#listeners.add(listener);
    if (this.#listeners.size === 1) this.#open();
    return () => {
      if (this.#listeners.delete(listener) && this.#listeners.size === 0) this.#stop();
    };
  }

  #emit(change: StoreChange): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch {
        // A listener's failure is its own: the others and the feed go on.
      }
    }
  }

  #open(): void {
    const generation = this.#generation;
    if (this.#listeners.size === 0 || this.#sub !== undefined || this.#pending === generation) {
      return;
    }
    if (this.#transport.isClosed?.() === true) {
      this.#retry();
      return;
    }
    this.#pending = generation;
    // The connection may end before the subscription's promise is handled: remembered here.
    const attempt: { sub?: RedisSubscriber; lost: boolean } = { lost: false };
    const events: SubscriberEvents = {
      message: (text) => {
        if (generation !== this.#generation) return;
        const change = parse(text);
        if (change !== undefined) this.#emit(change);
      },
      lost: () => {
        if (attempt.lost) return;
        attempt.lost = true;
        if (attempt.sub !== undefined && attempt.sub === this.#sub) this.#lost();
      },
    };
    let subscribing: Promise<RedisSubscriber>;
    try {
      subscribing = this.#transport.subscribe!(this.#channel, events);
    } catch (error) {
      subscribing = Promise.reject(error);
    }
    subscribing.then(
      (sub) => {
        if (this.#pending === generation) this.#pending = undefined;
        if (generation !== this.#generation || attempt.lost) {
          sub.close();
          if (generation === this.#generation) this.#retry();
          return;
        }
        attempt.sub = sub;
        this.#sub = sub;
        this.#retryMs = MIN_RETRY_MS;
        // Whatever was published before the subscription was not heard.
        this.#emit(MISSED);
        this.#emit(ALIVE);
        this.#beat();
      },
      () => {
        if (this.#pending === generation) this.#pending = undefined;
        if (generation === this.#generation) this.#retry();
      },
    );
  }

  /** Opens again after the current backoff, and doubles it. */
  #retry(): void {
    if (this.#listeners.size === 0) return;
    clearTimeout(this.#timer);
    this.#timer = later(() => this.#open(), this.#retryMs);
    this.#retryMs = Math.min(this.#retryMs * 2, MAX_RETRY_MS);
  }

  #beat(): void {
    this.#timer = later(() => {
      const sub = this.#sub;
      if (sub === undefined) return;
      if (this.#pingSent !== 0) {
        if (performance.now() - this.#pingSent > PING_TIMEOUT_MS) {
          this.#lost();
          return;
        }
      } else if (sub.ping !== undefined) {
        const sent = performance.now();
        this.#pingSent = sent;
        sub.ping().then(
          () => {
            if (this.#sub !== sub || this.#pingSent !== sent) return;
            this.#pingSent = 0;
            this.#emit(ALIVE);
          },
          () => {
            if (this.#sub === sub) this.#lost();
          },
        );
      } else {
        // No command while subscribed (node-redis 1.x): the client's events are all there is.
        this.#emit(ALIVE);
      }
      this.#beat();
    }, HEARTBEAT_MS);
  }

  #lost(): void {
    const sub = this.#sub;
    this.#sub = undefined;
    this.#pingSent = 0;
    clearTimeout(this.#timer);
    sub?.close();
    this.#emit(DOWN);
    this.#retry();
  }

  #stop(): void {
    this.#generation++;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const sub = this.#sub;
    this.#sub = undefined;
    this.#pingSent = 0;
    this.#retryMs = MIN_RETRY_MS;
    sub?.close();
  }
}
