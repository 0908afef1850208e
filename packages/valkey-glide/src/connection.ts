import { FloodgateError } from '@floodgate/core';
import type { RedisTransport } from '@floodgate/core/redis';
import {
  Batch,
  ClusterBatch,
  type GlideClient,
  type GlideClusterClient,
} from '@valkey/valkey-glide';

/** A GLIDE client: `GlideClient` (one node, or a primary and its replicas) or a cluster client. */
export type Client = GlideClient | GlideClusterClient;

type Reply = Awaited<ReturnType<GlideClient['customCommand']>>;

/** GLIDE words server errors its own way; the shared machinery looks for Redis's `NOSCRIPT`. */
function serverError(error: unknown): unknown {
  const message = error instanceof Error ? error.message : '';
  if (/NoScriptError|NOSCRIPT/.test(message))
    return new Error(`NOSCRIPT ${message}`, { cause: error });
  return error;
}

interface Queued {
  argv: string[];
  resolve(reply: unknown): void;
  reject(error: unknown): void;
}

const isClient = (c: unknown): c is Client =>
  typeof c === 'object' && c !== null && typeof (c as GlideClient).customCommand === 'function';

/** Whether a client is a `GlideClusterClient`. */
export const isCluster = (c: Client): boolean =>
  typeof (c as Partial<GlideClusterClient>).fcallWithRoute === 'function';

/**
 * A GLIDE client, or the promise of one, and how commands reach it: what `GlideStore`'s
 * transport sends through. A command sent before a promised client is there waits for it.
 */
export class GlideConnection {
  client: Client | undefined;
  /** The promised client; undefined when the client was given as is. */
  readonly pending: Promise<Client> | undefined;
  #queue: Queued[] | undefined;

  /** `onClient` is called when a promised client arrives, in the same step that sets `client`. */
  constructor(client: Client | PromiseLike<Client>, onClient: (client: Client) => void) {
    if (isClient(client)) {
      this.client = client;
    } else if (typeof (client as PromiseLike<unknown> | null)?.then === 'function') {
      this.pending = Promise.resolve(client).then((c) => {
        if (!isClient(c)) throw new Error('the promise did not resolve to a GLIDE client');
        this.client = c;
        onClient(c);
        return c;
      });
      this.pending.catch(() => {}); // reported by each call instead
    } else {
      throw new FloodgateError(
        'INVALID_OPTION',
        'GlideStore needs a GlideClient or GlideClusterClient (or the promise createClient returns)',
      );
    }
  }

  /**
   * The transport over this connection. `canBatch` is the caller's: a promised client's kind
   * (one node or a cluster) is not known until it is there.
   */
  transport(canBatch: boolean): RedisTransport {
    return {
      label: 'valkey-glide',
      canBatch,
      send: (firstKey, name, args) => this.#send(firstKey, name, args),
      sendWithWait: (firstKey, name, args, count, timeoutMs) =>
        this.#sendWithWait(firstKey, name, args, count, timeoutMs),
      // Connected and not closed (GLIDE reconnects on its own; it has no other state to read).
      isReady: () =>
        this.client !== undefined &&
        (this.client as unknown as { isClosed?: boolean }).isClosed !== true,
    };
  }

  get #cluster(): boolean {
    return this.client !== undefined && isCluster(this.client);
  }

  async #connected(): Promise<Client> {
    return this.client ?? (await this.pending!);
  }

  async #send(firstKey: string, name: string, args: string[]): Promise<unknown> {
    const client = await this.#connected();
    try {
      // EVALSHA, EVAL and DEL are routed by GLIDE from their keys; TIME has none: it goes to the
      // node owning firstKey, whose clock the script will read.
      if (name === 'TIME' && this.#cluster) {
        return await (client as GlideClusterClient).customCommand([name], {
          route: { type: 'primarySlotKey', key: firstKey },
        });
      }
      if (this.#cluster) return await client.customCommand([name, ...args]);
    } catch (error) {
      throw serverError(error);
    }
    return this.#ordered(client as GlideClient, [name, ...args]);
  }

  /**
   * GLIDE runs the requests it has in hand concurrently in its core, so two commands sent in one
   * tick may reach the server in either order (a reset overtaking the decision made before it).
   * The commands of one tick go as one non-atomic `Batch` instead: one pipeline, in call order,
   * one round trip, each reply or error to its caller.
   */
  #ordered(client: GlideClient, argv: string[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.#queue === undefined) {
        this.#queue = [];
        queueMicrotask(() => this.#flush(client));
      }
      this.#queue.push({ argv, resolve, reject });
    });
  }

  async #flush(client: GlideClient): Promise<void> {
    const queue = this.#queue!;
    this.#queue = undefined;
    if (queue.length === 1) {
      const [{ argv, resolve, reject }] = queue as [Queued];
      return client.customCommand(argv).then(resolve, (e) => reject(serverError(e)));
    }
    const batch = new Batch(false);
    for (const q of queue) batch.customCommand(q.argv);
    try {
      const replies = await client.exec(batch, false);
      if (replies === null) throw new Error('the batch was discarded');
      queue.forEach((q, i) => {
        const reply = replies[i];
        if (reply instanceof Error) q.reject(serverError(reply));
        else q.resolve(reply);
      });
    } catch (error) {
      for (const q of queue) q.reject(serverError(error));
    }
  }

  async #sendWithWait(
    firstKey: string,
    name: string,
    args: string[],
    count: number,
    timeoutMs: number,
  ): Promise<[unknown, number]> {
    // One GLIDE batch, not atomic (a pipeline): one round trip on one connection, so WAIT counts
    // the replicas holding the script's writes. On a cluster it is routed whole to the primary
    // owning firstKey (WAIT has no key of its own to route by).
    const client = await this.#connected();
    const wait = ['WAIT', String(count), String(timeoutMs)];
    let replies: Reply[] | null;
    try {
      replies = this.#cluster
        ? await (client as GlideClusterClient).exec(
            new ClusterBatch(false).customCommand([name, ...args]).customCommand(wait),
            false,
            { route: { type: 'primarySlotKey', key: firstKey } },
          )
        : await (client as GlideClient).exec(
            new Batch(false).customCommand([name, ...args]).customCommand(wait),
            false,
          );
    } catch (error) {
      throw serverError(error);
    }
    if (replies === null) throw new Error('the batch was discarded');
    const [reply, waited] = replies;
    if (waited instanceof Error) throw waited;
    return [reply instanceof Error ? serverError(reply) : reply, Number(waited)];
  }
}
