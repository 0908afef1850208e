import { LRUCache } from 'lru-cache';
import { FloodgateError, isFloodgateError } from './errors.js';
import { encodeIdentity, policyKey, validateIdentity, validatePrefix } from './keys.js';
import type { PolicyResult, Store, StoreCall } from './store.js';
import type { Decision, DecisionReason, Policy, PolicyDecision } from './types.js';

export interface LimiterOptions {
  /** Where state lives: `new MemoryStore()`, `new IoRedisStore(redis)`, … */
  store: Store;
  /** One policy, or several that must all admit; a denial charges none of them. */
  policy: Policy | readonly Policy[];
  /** Namespaces the keys: `<prefix>:{<identity>}:<policy id>`. @default 'floodgate' */
  prefix?: string;
  /**
   * What to decide when the store fails or times out: `'throw'` a FloodgateError, `'allow'`,
   * `'deny'`, or decide with another store. @default the store's `fallback()` (remote stores
   * supply an in-process MemoryStore, so limits keep holding per node), otherwise `'throw'`
   */
  onStoreError?: 'throw' | 'allow' | 'deny' | Store;
  /** Give up on the store after this many ms (then `onStoreError` applies). @default no timeout */
  timeoutMs?: number;
  /**
   * Answer denied identities in-process until their `retryAfterMs` has passed, with no store
   * round trip. `max` bounds the entries. @default on (max 10 000) for remote stores, off otherwise
   */
  blockCache?: boolean | { max: number };
  /** Called with every store failure the limiter absorbed, so it can be alerted on. */
  onError?: (error: FloodgateError) => void;
}

export interface Limiter {
  /** Charges `cost` (default 1) if every policy admits it. */
  limit(identity: string, options?: { cost?: number }): Promise<Decision>;
  /** Charges nothing: remaining as it stands; `allowed` says whether one more unit would pass now. */
  peek(identity: string): Promise<Decision>;
  /** Forgets the identity in every policy. */
  reset(identity: string): Promise<void>;
  readonly policies: readonly Policy[];
}

const OPTION_NAMES = [
  'store',
  'policy',
  'prefix',
  'onStoreError',
  'timeoutMs',
  'blockCache',
  'onError',
];

function validatePolicies(policy: unknown): readonly Policy[] {
  const list = (Array.isArray(policy) ? policy : [policy]) as unknown[];
  if (list.length === 0)
    throw new FloodgateError('INVALID_POLICY', 'at least one policy is required');
  const ids = new Set<string>();
  for (const p of list) {
    if (
      typeof p !== 'object' ||
      p === null ||
      typeof (p as Policy).id !== 'string' ||
      !Array.isArray((p as Policy).params)
    ) {
      throw new FloodgateError(
        'INVALID_POLICY',
        'policy must come from a factory such as tokenBucket({...})',
      );
    }
    if (ids.has((p as Policy).id))
      throw new FloodgateError('INVALID_POLICY', `duplicate policy ${(p as Policy).id}`);
    ids.add((p as Policy).id);
  }
  return Object.freeze(list.slice() as Policy[]);
}

function validateOptions(options: LimiterOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new FloodgateError('INVALID_OPTION', 'options required');
  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.includes(key))
      throw new FloodgateError('INVALID_OPTION', `unknown option "${key}"`);
  }
  if (!isStore(options.store)) {
    throw new FloodgateError('INVALID_OPTION', 'store must implement evaluate() and reset()');
  }
  const t = options.timeoutMs;
  if (t !== undefined && (!Number.isSafeInteger(t) || t <= 0)) {
    throw new FloodgateError('INVALID_OPTION', 'timeoutMs must be a positive integer');
  }
  // Checked here, not at the first store failure: a typo such as 'alow' must not wait for an
  // outage to surface as a TypeError.
  const e = options.onStoreError as unknown;
  if (e !== undefined && e !== 'throw' && e !== 'allow' && e !== 'deny' && !isStore(e)) {
    throw new FloodgateError(
      'INVALID_OPTION',
      "onStoreError must be 'throw', 'allow', 'deny' or a store",
    );
  }
  const b = options.blockCache as unknown;
  const max = (b as { max?: unknown } | null)?.max;
  if (
    b !== undefined &&
    typeof b !== 'boolean' &&
    (typeof b !== 'object' || typeof max !== 'number' || !Number.isSafeInteger(max) || max <= 0)
  ) {
    throw new FloodgateError('INVALID_OPTION', 'blockCache must be a boolean or { max: n }, n ≥ 1');
  }
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'onError must be a function');
  }
}

function isStore(value: unknown): value is Store {
  const s = value as Partial<Store> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.evaluate === 'function' &&
    typeof s.reset === 'function'
  );
}

/** Combines per-policy results into the decision a caller sees. */
export function toDecision(
  policies: readonly Policy[],
  results: readonly PolicyResult[],
  reason?: DecisionReason,
): Decision {
  let allowed = true;
  let binding = 0;
  let resetAfterMs = 0;
  let retryAfterMs = 0;
  let delayMs = 0;
  const parts: PolicyDecision[] = [];
  for (let i = 0; i < policies.length; i++) {
    const p = policies[i]!;
    const r = results[i]!;
    if (!r.allowed) allowed = false;
    if (r.remaining < results[binding]!.remaining) binding = i;
    resetAfterMs = Math.max(resetAfterMs, r.resetAfterMs);
    retryAfterMs = Math.max(retryAfterMs, r.retryAfterMs);
    delayMs = Math.max(delayMs, r.delayMs);
    parts.push({
      name: p.name,
      kind: p.kind,
      limit: p.limit,
      windowMs: p.windowMs,
      allowed: r.allowed,
      remaining: r.remaining,
      resetAfterMs: r.resetAfterMs,
      retryAfterMs: r.retryAfterMs,
      delayMs: r.delayMs,
    });
  }
  const d = {
    allowed,
    limit: policies[binding]!.limit,
    remaining: results[binding]!.remaining,
    resetAfterMs,
    retryAfterMs: allowed ? 0 : retryAfterMs,
    delayMs: allowed ? delayMs : 0,
    policies: parts,
  };
  return reason === undefined ? d : { ...d, reason };
}

function withTimeout<T>(promise: Promise<T>, ms: number | undefined): Promise<T> {
  if (ms === undefined) return promise;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new FloodgateError('STORE_TIMEOUT', `store did not answer within ${ms} ms`)),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Builds a limiter over one store and one or more policies.
 * @example
 * const limiter = createLimiter({ store: new MemoryStore(), policy: tokenBucket({ limit: 100, interval: '1m' }) });
 * const d = await limiter.limit('key_123');
 * if (!d.allowed) return tooManyRequests(d.retryAfterMs);
 */
export function createLimiter(options: LimiterOptions): Limiter {
  validateOptions(options);
  const policies = validatePolicies(options.policy);
  const prefix = options.prefix ?? 'floodgate';
  validatePrefix(prefix);
  const { store, timeoutMs, onError } = options;
  const onStoreError = options.onStoreError ?? store.fallback?.() ?? 'throw';
  const capacity = Math.min(...policies.map((p) => p.capacity));
  const cacheOption = options.blockCache ?? store.remote === true;
  const blocked = cacheOption
    ? new LRUCache<string, { at: number; until: number; cost: number; decision: Decision }>({
        max: cacheOption === true ? 10_000 : cacheOption.max,
      })
    : undefined;

  const clock = store.now === undefined ? Date.now : () => store.now!();
  const keysOf = (identity: string): { id: string; keys: string[] } => {
    validateIdentity(identity);
    const id = encodeIdentity(identity);
    return { id, keys: policies.map((p) => policyKey(prefix, id, p.id)) };
  };

  async function run(call: StoreCall): Promise<Decision> {
    try {
      return toDecision(policies, await withTimeout(store.evaluate(call), timeoutMs));
    } catch (cause) {
      const error =
        isFloodgateError(cause) &&
        (cause.code === 'STORE_TIMEOUT' || cause.code === 'STORE_UNAVAILABLE')
          ? cause
          : new FloodgateError('STORE_UNAVAILABLE', 'the store failed to decide', { cause });
      if (onStoreError === 'throw') throw error;
      onError?.(error);
      const reason: DecisionReason =
        error.code === 'STORE_TIMEOUT' ? 'store-timeout' : 'store-unavailable';
      if (onStoreError === 'allow' || onStoreError === 'deny') {
        const allowed = onStoreError === 'allow';
        const results = policies.map(() => ({
          allowed,
          remaining: 0,
          resetAfterMs: 0,
          retryAfterMs: allowed ? 0 : 1000,
          delayMs: 0,
        }));
        return toDecision(policies, results, reason);
      }
      return toDecision(policies, await onStoreError.evaluate(call), reason);
    }
  }

  return {
    policies,
    async limit(identity, opts) {
      // `limit(id, 5)` or `{ costs: 5 }` would otherwise charge 1 without a word.
      if (
        opts !== undefined &&
        (typeof opts !== 'object' || opts === null || Object.keys(opts).some((k) => k !== 'cost'))
      ) {
        throw new FloodgateError('INVALID_OPTION', 'limit() takes { cost } as its options');
      }
      const cost = opts?.cost ?? 1;
      if (typeof cost !== 'number' || !Number.isSafeInteger(cost) || cost <= 0) {
        throw new FloodgateError(
          'INVALID_COST',
          `cost must be a positive safe integer, got ${String(cost)}`,
        );
      }
      const { id, keys } = keysOf(identity);
      if (cost > capacity) {
        throw new FloodgateError(
          'COST_EXCEEDS_CAPACITY',
          `cost ${cost} exceeds the largest admissible cost ${capacity}`,
        );
      }
      if (blocked !== undefined) {
        const hit = blocked.get(id);
        const now = clock();
        // Only the same cost: a larger one is denied too, but its tight wait may be longer.
        if (hit !== undefined && now < hit.until && cost === hit.cost) {
          // Every wait in the cached decision has shrunk by the time since it was made.
          const elapsed = now - hit.at;
          const results = hit.decision.policies.map((r) => ({
            ...r,
            retryAfterMs: Math.max(0, r.retryAfterMs - elapsed),
            resetAfterMs: Math.max(0, r.resetAfterMs - elapsed),
          }));
          return toDecision(policies, results, 'blocked-cache');
        }
      }
      const decision = await run({ keys, policies, cost, mode: 'limit' });
      if (blocked !== undefined && !decision.allowed && decision.reason === undefined) {
        const at = clock();
        blocked.set(id, { at, until: at + decision.retryAfterMs, cost, decision });
      }
      return decision;
    },
    async peek(identity) {
      const { keys } = keysOf(identity);
      return run({ keys, policies, cost: 1, mode: 'peek' });
    },
    async reset(identity) {
      const { id, keys } = keysOf(identity);
      blocked?.delete(id);
      await store.reset(keys);
    },
  };
}
