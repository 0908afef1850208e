// White-box check of the Lua mirror: before every call, read each key's state as Redis holds it,
// run the TypeScript reference (evaluateAll) on exactly that state, run the script, and compare
// results, the state written and its TTL. Keys are PERSISTed after each step so that real-time
// expiry cannot race the fake clock: this isolates the arithmetic, time may jump anywhere.
import {
  fixedWindow,
  leakyBucket,
  type Policy,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { newVerdict, quotaKernel, quotaPeriodEnd } from '@floodgate/core/internal';
import { scriptForKinds } from '@floodgate/core/redis';
import { evaluateAll, type PolicyState, type StoreCall } from '@floodgate/core/store';
import { keysFor, type RedisServer, rng, startRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IoRedisStore } from '../src/index.js';

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url, { enableAutoPipelining: true });
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

async function readState(
  key: string,
  policy: Policy | undefined,
): Promise<PolicyState | undefined> {
  if (policy === undefined) {
    // A block key (blockFor): the ms until which the block runs.
    const raw = await redis.get(key);
    return raw === null ? undefined : [Number(raw)];
  }
  if (policy.kind === 'slidingWindowLog') {
    const flat = await redis.zrange(key, 0, -1, 'WITHSCORES');
    if (flat.length === 0) return undefined;
    // Members "<before>:<cost>" scored by ms: the reference's triples [ms, before, cost].
    const s: number[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      const [before, cost] = flat[i]!.split(':').map(Number);
      s.push(Number(flat[i + 1]), before!, cost!);
    }
    return s;
  }
  return decodeState(await redis.get(key), policy);
}

/** `e` of the least power of two above the last window number before 2^42 ms (fixed_window.lua). */
function windowBits(w: number): bigint {
  const last = 2n ** 42n / BigInt(w);
  return last === 0n ? 0n : BigInt(last.toString(2).length);
}

/** A GET-read state, string or int-encoded, as the TypeScript reference holds it. */
function decodeState(raw: string | null, policy: Policy): PolicyState | undefined {
  if (raw === null) return undefined;
  if (raw.includes(':')) return raw.split(':').map(Number);
  // Int-encoded (see the .lua fragments), decoded here in BigInt, independently of the script.
  // The radixes depend on the window alone, never on the limit.
  const v = BigInt(raw);
  const w = BigInt(policy.windowMs);
  switch (policy.kind) {
    case 'fixedWindow': {
      const radix = 2n ** (53n - windowBits(policy.windowMs));
      return [Number((v / radix) * w), Number(v % radix)];
    }
    case 'slidingWindow': {
      const radix = 2n ** ((53n - windowBits(policy.windowMs)) / 2n);
      const q = v / radix;
      return [Number((q / radix) * w), Number(q % radix), Number(v % radix)];
    }
    case 'quota':
      // The period's end in minutes, then the count.
      return [Number((v / 2n ** 26n) * 60_000n), Number(v % 2n ** 26n)];
    default:
      // A bucket's arrival time in whole ms; the reference writes its ticks per ms beside.
      return [Number(v), 0, policy.params[2]];
  }
}

/**
 * The same policy (kind, window, period, zone, blockFor: the same id) with another limit, burst
 * or queue: what a tier switch or a new limit hands the same key.
 */
function relimited(p: Policy, random: () => number): Policy {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(random() * a.length)]!;
  const limit = pick([1, 2, 3, 7, 10, 100, 1000, 12_345]);
  const blockFor = p.blockForMs === undefined ? {} : { blockFor: p.blockForMs };
  const w = p.windowMs;
  switch (p.kind) {
    case 'fixedWindow':
      return fixedWindow({ limit, window: w, ...blockFor });
    case 'slidingWindow':
      return slidingWindow({ limit, window: w, ...blockFor });
    case 'slidingWindowLog':
      return slidingWindowLog({
        limit: Math.min(limit, p.limit > 100 ? 3000 : 100),
        window: w,
        ...blockFor,
      });
    case 'tokenBucket':
      return tokenBucket({ limit, interval: w, burst: pick([limit, 1, 5, 1000]), ...blockFor });
    case 'quota': {
      const big = pick([limit, 1_000_000_000, 9_000_000_000_000]);
      return quota({ limit: big, ...p.calendar!, ...blockFor });
    }
    case 'leakyBucket':
      return leakyBucket({ limit, interval: w, queue: pick([1, 4, 50]), ...blockFor });
  }
}

function randomPolicy(random: () => number): Policy {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(random() * a.length)]!;
  const limit = pick([1, 2, 3, 7, 10, 100, 1000, 12_345]);
  const w = pick([1, 3, 10, 999, 1000, 60_000, 86_400_000, 7 * 86_400_000]);
  // A third of the policies block (a penalty key of their own, in the same script run).
  const blockFor = random() < 0.33 ? { blockFor: pick([1, 50, 1000, 3_600_000]) } : {};
  switch (Math.floor(random() * 6)) {
    case 0:
      return fixedWindow({ limit, window: w, ...blockFor });
    case 1:
      return slidingWindow({ limit, window: w, ...blockFor });
    case 2:
      return slidingWindowLog({ limit: Math.min(limit, 100), window: w, ...blockFor });
    case 3:
      return tokenBucket({ limit, interval: w, burst: pick([limit, 1, 5, 1000]), ...blockFor });
    case 4: {
      // Limits past 2^53 / (minutes since the epoch) store the string form.
      const big = pick([limit, 1_000_000_000, 9_000_000_000_000]);
      const per = pick(['day', 'week', 'month'] as const);
      // Monrovia's offset had seconds until 1972: period ends off the minute, the string form.
      const zones = [
        'UTC',
        'Europe/Berlin',
        'Australia/Lord_Howe',
        'Asia/Kathmandu',
        'Africa/Monrovia',
      ];
      return quota({ limit: big, per, timeZone: pick(zones), ...blockFor });
    }
    default:
      return leakyBucket({ limit, interval: w, queue: pick([1, 4, 50]), ...blockFor });
  }
}

it('the Lua script returns and writes what the TypeScript reference does, on any state', async () => {
  const failures: string[] = [];
  for (let seed = 1; seed <= 80 && failures.length === 0; seed++) {
    const random = rng(seed * 7919);
    const int = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));
    // Seed 1: a log large enough that the script adds members in several ZADD chunks.
    const policies =
      seed === 1 ? [slidingWindowLog({ limit: 3000, window: 1000 })] : [randomPolicy(random)];
    if (seed > 1 && random() < 0.4) {
      const p = randomPolicy(random);
      if (p.id !== policies[0]!.id) policies.push(p);
    }
    // Half the seeds switch at random steps to the same policies with other limits (bursts,
    // queues): the key's state, written under one limit, is read under another.
    const others = random() < 0.5 ? policies.map((p) => relimited(p, random)) : policies;
    for (let i = 0; i < policies.length; i++) expect(others[i]!.id).toBe(policies[i]!.id);
    const wmax = Math.max(...policies.map((p) => p.windowMs));
    const capacity = Math.min(...[...policies, ...others].map((p) => p.capacity));
    let t = [0, 1, 1_700_000_000_000, 4_102_444_800_000][int(0, 3)]! + int(0, 1_000_000);
    const keys = keysFor(`mirror${seed}`, 'id', policies);
    const store = new IoRedisStore(redis, { clock: 'client', now: () => t });
    for (let step = 0; step < 60 && failures.length === 0; step++) {
      const r = random();
      const jump =
        r < 0.3
          ? 0
          : r < 0.55
            ? int(0, 5)
            : r < 0.75
              ? int(0, Math.ceil(wmax / 10))
              : r < 0.9
                ? int(0, wmax * 2)
                : -int(0, wmax);
      t = Math.max(0, t + jump);
      const cost = random() < 0.6 ? int(1, seed === 1 ? 700 : 1) : int(1, capacity);
      const m = random();
      const mode = m < 0.1 ? 'peek' : m < 0.25 ? 'refund' : m < 0.4 ? 'settle' : 'limit';
      const now = random() < 0.5 ? policies : others;
      // Per-policy costs (a Cost record, the per-policy-costs script): some limits, every
      // settle (signed: a charge past capacity, or a refund).
      const perPolicy =
        mode === 'settle'
          ? now.map((p) => int(-p.capacity, 2 * p.capacity))
          : mode === 'limit' && random() < 0.3
            ? now.map((p) => int(0, p.capacity))
            : undefined;
      // Some unit must move: an admission charges something, a settle of all zeros is no call.
      if (
        perPolicy !== undefined &&
        !perPolicy.some((c) => c > 0 || (mode === 'settle' && c < 0))
      ) {
        perPolicy[0] = 1;
      }
      const call: StoreCall =
        perPolicy === undefined
          ? { keys, policies: now, cost, mode }
          : {
              keys,
              policies: now,
              cost: Math.max(...perPolicy.map(Math.abs)),
              costs: perPolicy,
              mode,
            };
      const states = await Promise.all(keys.map((k, i) => readState(k, now[i])));
      const expected = evaluateAll(call, states, t);
      const got = await store.evaluate(call);
      const after = await Promise.all(keys.map((k, i) => readState(k, now[i])));
      const ttls = await Promise.all(keys.map((k) => redis.pttl(k)));
      const context = `seed ${seed} step ${step} now ${t} cost ${call.costs ?? cost} ${call.mode} ${now.map((p) => `${p.kind}${JSON.stringify(p.params)}`)} states ${JSON.stringify(states)}`;
      if (JSON.stringify(got) !== JSON.stringify(expected.results)) {
        failures.push(
          `${context}\n lua ${JSON.stringify(got)}\n ts  ${JSON.stringify(expected.results)}`,
        );
      }
      for (let i = 0; i < keys.length; i++) {
        const w = expected.writes[i];
        const want = w === undefined ? states[i] : w === null ? undefined : w.state;
        // A write with a TTL of a few ms may legitimately be gone before we read it back.
        if (w && w.ttlMs <= 50 && ttls[i] === -2) continue;
        if (JSON.stringify(after[i]) !== JSON.stringify(want)) {
          failures.push(
            `${context}\n key ${i} state lua ${JSON.stringify(after[i])} ts ${JSON.stringify(want)}`,
          );
        }
        if (w && !(ttls[i]! <= w.ttlMs && ttls[i]! >= Math.max(w.ttlMs - 1000, 0))) {
          failures.push(`${context}\n key ${i} ttl lua ${ttls[i]} ts ${w.ttlMs}`);
        }
      }
      await Promise.all(keys.map((k) => redis.persist(k)));
    }
  }
  expect(failures.slice(0, 3).join('\n')).toBe('');
  // About 24 000 round trips: on a loaded 2-core machine they took longer than the 60 s default.
}, 180_000);

it('a slidingWindowLog request is one sorted-set member, whatever its cost', async () => {
  const store = new IoRedisStore(redis);
  const policy = slidingWindowLog({ limit: 10_000, window: '1m' });
  const [key] = keysFor('logsize', 'u', [policy]);
  await redis.del(key!);
  const call: StoreCall = { keys: [key!], policies: [policy], cost: 10_000, mode: 'limit' };
  expect((await store.evaluate(call))[0]!.allowed).toBe(true);
  // One unit per member, as before, took 10 000 members and about 1 MB here.
  expect(await redis.zcard(key!)).toBe(1);
  expect(Number(await redis.memory('USAGE', key!))).toBeLessThan(512);
  const denied = await store.evaluate({ ...call, cost: 1 });
  expect(denied[0]!.allowed).toBe(false);
  expect(denied[0]!.retryAfterMs).toBeGreaterThan(59_000);
  expect(await redis.zcard(key!)).toBe(1);
});

it("server clock: the window's first admission sets its key to expire at the window's end, later ones raise it by INCRBY; never past the reported reset, and decodes as the reference", async () => {
  const store = new IoRedisStore(redis);
  for (const policy of [
    fixedWindow({ limit: 10, window: '1h' }),
    slidingWindow({ limit: 10, window: '1h' }),
  ]) {
    const [key] = keysFor(`incr-${policy.kind}`, 'u', [policy]);
    await redis.del(key!);
    const call: StoreCall = { keys: [key!], policies: [policy], cost: 2, mode: 'limit' };
    const before = Number(
      /cmdstat_incrby:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0,
    );
    const first = (await store.evaluate(call))[0]!;
    const end = await redis.call('PEXPIRETIME', key!);
    await new Promise((r) => setTimeout(r, 30));
    const second = (await store.evaluate(call))[0]!;
    const third = (await store.evaluate({ ...call, cost: 1 }))[0]!;
    expect([first.remaining, second.remaining, third.remaining]).toEqual([8, 6, 5]);
    const state = (await readState(key!, policy))!;
    // Five units counted in the current window, whichever the encoding.
    expect(state[1]).toBe(5);
    // PEXPIREAT: a whole number of hours (the end of this window, or for the sliding window of the
    // next), kept by the INCRBYs after it.
    expect(Number(end) % 3_600_000).toBe(0);
    expect(await redis.call('PEXPIRETIME', key!)).toBe(end);
    expect(await redis.pttl(key!)).toBeLessThanOrEqual(third.resetAfterMs);
    const after = Number(
      /cmdstat_incrby:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0,
    );
    expect(after - before).toBe(2);
  }
});

it('quota: the script picks the period among the ends sent as quotaPeriodEnd does, and refuses past them', async () => {
  const script = scriptForKinds(['quota']);
  const [key] = keysFor('quota-pick', 'u', [quota({ limit: 5, per: 'day' })]);
  const [b0, b1, b2] = [1_000_000_020_000, 1_000_086_400_000, 1_000_172_800_000];
  for (const t of [b0 - 5, b0, b1 - 1, b1, b2 - 1, 1]) {
    await redis.del(key!);
    const argv = ['limit', '2', String(t), '', '5', String(b0), String(b1), String(b2)];
    // The script and the read in one transaction: Redis samples the time once for it, so a state
    // written with a 1 ms TTL (t one ms before an end) cannot expire before it is read.
    const [[, reply], [, raw]] = (await redis
      .multi()
      .eval(script.source, 1, key!, ...argv)
      .get(key!)
      .exec()) as [[null, number[]], [null, string | null]];
    const end = quotaPeriodEnd(b0, b1, b2, t);
    const v = newVerdict();
    quotaKernel(5, end, 0, false, 0, 0, 0, undefined, t, 2, v);
    expect(reply.slice(0, 5), `t ${t}`).toEqual([1, 3, end - t, 0, 0]);
    expect([v.nextRemaining, v.nextResetAfterMs]).toEqual([3, end - t]);
    // The state written is the period's end and the count (the string form: b0 is off the minute).
    expect(decodeState(raw, quota({ limit: 5, per: 'day' }))).toEqual([end, 2]);
  }
  await expect(
    redis.eval(
      script.source,
      1,
      key!,
      'limit',
      '1',
      String(b2),
      '',
      '5',
      String(b0),
      String(b1),
      String(b2),
    ),
  ).rejects.toThrow(/clocks differ by more than a period/);
});
