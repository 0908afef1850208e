// The benchmark's Worker: runs decisions through a DurableObjectStore from inside workerd (the
// Worker → object RPC → SQLite → reply path a deployed Worker takes) and times them with the
// isolate's clock, which locally runs in real time.
import { DurableObject } from 'cloudflare:workers';
import { createLimiter, fixedWindow, type Limiter } from '@floodgate/core';
import { evaluateAll, type PolicyState, type StoreCall } from '@floodgate/core/store';
import { MemoryStore } from '@floodgate/memory';
import { DurableObjectStore, floodgateObject } from '../src/index.js';
import type { WireCall } from '../src/wire.js';

export class FloodgateObject extends floodgateObject(DurableObject) {}

// The transport question, alone: one decision's work on state in memory (no storage), reached
// by RPC (which needs `extends DurableObject`) or by fetch with JSON (which a plain class takes).
const states = new Map<string, PolicyState>();
function decideInMemory(call: WireCall) {
  const { results, writes } = evaluateAll(
    call as StoreCall,
    call.keys.map((k) => states.get(k)),
    Date.now(),
  );
  writes.forEach((w, i) => {
    if (w) states.set(call.keys[i]!, w.state);
  });
  return results;
}
export class ViaRpc extends DurableObject {
  decide(call: WireCall) {
    return decideInMemory(call);
  }
}
export class ViaFetch {
  async fetch(request: Request): Promise<Response> {
    return Response.json(decideInMemory((await request.json()) as WireCall));
  }
}

interface Env {
  FLOODGATE: DurableObjectNamespace<FloodgateObject>;
  VIA_RPC: DurableObjectNamespace<ViaRpc>;
  VIA_FETCH: DurableObjectNamespace;
}

/** `n` one-policy calls to one object through `transport`, one at a time: calls per second. */
async function transport(env: Env, kind: 'rpc' | 'fetch', n: number): Promise<number> {
  const call: WireCall = {
    keys: ['bench:{t}:fw'],
    policies: [policy],
    cost: 1,
    mode: 'limit',
  };
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    if (kind === 'rpc') await env.VIA_RPC.get(env.VIA_RPC.idFromName('t')).decide(call);
    else {
      const stub = env.VIA_FETCH.get(env.VIA_FETCH.idFromName('t'));
      const res = await stub.fetch('http://object/', {
        method: 'POST',
        body: JSON.stringify(call),
      });
      await res.json();
    }
  }
  return Math.round((n / (performance.now() - start)) * 1000);
}

interface Run {
  /** Decisions to make. */
  readonly n: number;
  /** Decisions in flight at once. */
  readonly concurrency: number;
  /** Identities, taken round-robin. */
  readonly identities: number;
  /** Identity names start with this (a new one makes every identity cold). */
  readonly tag: string;
  readonly store: 'per-identity' | 'shards' | 'memory';
  readonly shards?: number;
}

// Never denies within a run; its state lives an hour, as a typical limit's does.
const policy = fixedWindow({ limit: 1_000_000_000, window: '1h' });
const memory = new MemoryStore();

function limiterFor(env: Env, r: Run): Limiter {
  const store =
    r.store === 'memory'
      ? memory
      : new DurableObjectStore(env.FLOODGATE, r.store === 'shards' ? { shards: r.shards } : {});
  return createLimiter({ store, policy, prefix: 'bench', blockCache: false, timeoutMs: false });
}

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === '/rpc' || path === '/fetch') {
      return Response.json({ perSecond: await transport(env, path.slice(1) as 'rpc', 5_000) });
    }
    const r = (await request.json()) as Run;
    const limiter = limiterFor(env, r);
    const latencies: number[] = [];
    let next = 0;
    let admitted = 0;
    const lane = async () => {
      while (next < r.n) {
        const id = `${r.tag}-${next++ % r.identities}`;
        const t = performance.now();
        if ((await limiter.limit(id)).allowed) admitted++;
        latencies.push(performance.now() - t);
      }
    };
    const start = performance.now();
    await Promise.all(Array.from({ length: r.concurrency }, lane));
    const ms = performance.now() - start;
    latencies.sort((a, b) => a - b);
    return Response.json({
      decisions: r.n,
      admitted,
      perSecond: Math.round((r.n / ms) * 1000),
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
    });
  },
};
