// Per-identity overrides on a limiter (`createLimiter({ overrides: true })`): checking what the
// app asks for, writing, reading and clearing it in the store (override-store.ts), and showing
// in each decision which policies ran on an override. The store applies them, in the decision's
// own call (override-state.ts says how); the limiter only hooks in here (limiter.ts).
import type { BlockedCache } from './blocked-cache.js';
import type { Breaker } from './breaker.js';
import { singleOf } from './decision.js';
import { FloodgateError } from './errors.js';
import { guarded } from './guarded.js';
import { callKeys } from './keys.js';
import type { LimiterOptions, ReservingLimiter } from './limiter-types.js';
import { checkOptions, type OptionNames } from './options.js';
import { paramsForLimit } from './override-params.js';
import { overrideWidth } from './override-state.js';
import { isOverrideStore, type OverrideStore } from './override-store.js';
import type { LimiterWithOverrides, OverrideOptions, StoredOverride } from './override-types.js';
import type { PolicyState } from './policies/common.js';
import type { ShadowMask } from './shadow.js';
import type { PolicyResult } from './store-types.js';
import type { Decision, DecisionReason, Policy, PolicyDecision } from './types.js';

const OVERRIDE_NAMES = { limit: true, until: true } as const satisfies OptionNames<OverrideOptions>;

/** The furthest `until` may be: an override is an exception with an end, a plan is a policy. */
const MAX_AHEAD_MS = 366 * 86_400_000;

const invalid = (message: string) => new FloodgateError('INVALID_OVERRIDE', message);

/**
 * The `overrides` option, checked with the other options: true only with a store that can hold
 * overrides, so a limiter never promises what its store cannot keep.
 */
export function overridesOption(options: LimiterOptions): boolean {
  const o = options.overrides as unknown;
  if (o === undefined || o === false) return false;
  if (o !== true) throw new FloodgateError('INVALID_OPTION', 'overrides must be true or false');
  if (!isOverrideStore(options.store)) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'overrides: the store cannot hold overrides (it has no writeOverrides/readOverrides)',
    );
  }
  return true;
}

/** `until` as epoch ms: a whole instant after `now`, at most MAX_AHEAD_MS ahead. */
function untilOf(until: unknown, now: number): number {
  const at = until instanceof Date ? until.getTime() : until;
  if (typeof at !== 'number' || !Number.isSafeInteger(at)) {
    throw invalid(`until must be a Date or epoch milliseconds, got ${String(until)}`);
  }
  if (at <= now) throw invalid(`until must be in the future, got ${new Date(at).toISOString()}`);
  if (at - now > MAX_AHEAD_MS) throw invalid('until must be at most 366 days ahead');
  return at;
}

function checkLimit(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(`${what} must be a whole number ≥ 0 (0 blocks), got ${String(value)}`);
  }
  return value;
}

/** Each policy's new limit, by index; undefined for a policy the override leaves as it is. */
function limitsOf(policies: readonly Policy[], limit: unknown): (number | undefined)[] {
  if (typeof limit === 'number') {
    const n = checkLimit(limit, 'limit');
    // A number is the one policy's limit; for several it is ambiguous, except 0: block them all.
    if (policies.length > 1 && n !== 0) {
      throw invalid('this limiter has several policies: name them, { limit: { <name>: n } }');
    }
    return policies.map(() => n);
  }
  if (typeof limit !== 'object' || limit === null || Array.isArray(limit)) {
    throw invalid('limit must be a number or an object of limits by policy name');
  }
  const out: (number | undefined)[] = policies.map(() => undefined);
  const names = Object.keys(limit);
  if (names.length === 0) throw invalid('limit names no policy');
  for (const name of names) {
    const at = policies.flatMap((p, i) => (p.name === name ? [i] : []));
    if (at.length !== 1) {
      throw invalid(
        at.length === 0
          ? `no policy of this limiter is named "${name}"`
          : `several policies are named "${name}": give them distinct names`,
      );
    }
    out[at[0]!] = checkLimit((limit as Record<string, unknown>)[name], `limit of "${name}"`);
  }
  return out;
}

/** What to write under each override key: the state, or null to delete it. */
function statesOf(
  policies: readonly Policy[],
  options: unknown,
  now: number,
): (PolicyState | null)[] {
  if (typeof options !== 'object' || options === null) {
    throw invalid('override takes { limit, until }');
  }
  checkOptions('override', options, OVERRIDE_NAMES, { code: 'INVALID_OVERRIDE' });
  const o = options as OverrideOptions;
  const limits = limitsOf(policies, o.limit);
  const until = untilOf(o.until, now);
  return policies.map((p, i) => {
    const limit = limits[i];
    if (limit === undefined) return null;
    const count = overrideWidth(p) - 2;
    // A block runs on the policy's own parameters: its slots only keep the stored width.
    const params = limit === 0 ? new Array<number>(count).fill(0) : paramsForLimit(p, limit, count);
    return [until, limit, ...params];
  });
}

/** What the limiter lends its overrides: its store, keys, clock and failure handling. */
export interface OverrideHost {
  readonly store: OverrideStore;
  readonly prefix: string;
  readonly policies: readonly Policy[];
  readonly clock: () => number;
  readonly timeoutMs: number | undefined;
  readonly breaker: Breaker | undefined;
  readonly blocked: BlockedCache | undefined;
  /** The identity checked (`INVALID_KEY`) and encoded. */
  idOf(identity: string): string;
}

/** The identity's override keys, one per policy, in order. */
function keysOf(host: OverrideHost, id: string): string[] {
  const n = host.policies.length;
  return callKeys(host.prefix, id, host.policies, true).slice(-n);
}

/** A write of the identity's overrides; this process's cached denial of it goes, before and after. */
async function write(host: OverrideHost, id: string, states: (PolicyState | null)[]) {
  host.blocked?.invalidate(id);
  try {
    await guarded(host.breaker, host.timeoutMs, () =>
      host.store.writeOverrides(keysOf(host, id), states),
    );
  } finally {
    // A denial in flight during the write may predate it: it must not be cached (as for reset).
    host.blocked?.invalidate(id);
  }
}

/** `limiter` with `override` and `overrides` (the limiter returned, wrapped or not). */
export function withOverrides(limiter: ReservingLimiter, host: OverrideHost): LimiterWithOverrides {
  const policies = host.policies;
  const out = limiter as ReservingLimiter & { -readonly [K in 'override' | 'overrides']?: unknown };
  out.override = async (identity: string, options: OverrideOptions) => {
    const states = statesOf(policies, options, host.clock());
    await write(host, host.idOf(identity), states);
  };
  out.overrides = {
    async get(identity: string): Promise<StoredOverride | undefined> {
      const id = host.idOf(identity);
      const states = await guarded(host.breaker, host.timeoutMs, () =>
        host.store.readOverrides(keysOf(host, id)),
      );
      const limits: Record<string, number> = {};
      let until = Number.POSITIVE_INFINITY;
      let only: number | undefined;
      policies.forEach((p, i) => {
        const s = states[i];
        if (s === undefined || s.length !== overrideWidth(p)) return;
        limits[p.name] = s[1]!;
        only = s[1]!;
        until = Math.min(until, s[0]!);
      });
      if (until === Number.POSITIVE_INFINITY) return undefined;
      return { limit: policies.length === 1 ? only! : limits, until };
    },
    async clear(identity: string): Promise<void> {
      await write(
        host,
        host.idOf(identity),
        policies.map(() => null),
      );
    },
  };
  return out as LimiterWithOverrides;
}

type Decide = (ps: readonly Policy[], rs: readonly PolicyResult[], r?: DecisionReason) => Decision;

/**
 * The decision of a limiter with overrides: a policy that ran on an override reports its limit
 * (so headers advertise the quota in force; a block keeps its own) and carries `override`, and
 * the decision says when the earliest of them ends. Without one, `decide`'s decision as it is.
 */
export function overriddenDecision(
  ps: readonly Policy[],
  results: readonly PolicyResult[],
  reason: DecisionReason | undefined,
  decide: Decide,
  mask: ShadowMask,
): Decision {
  // One policy, nothing shadowed: the common case, built in one go.
  if (ps.length === 1 && mask === undefined) {
    const o = results[0]!.override;
    return o === undefined ? decide(ps, results, reason) : single(ps[0]!, results[0]!, o, reason);
  }
  let any = false;
  for (const r of results) if (r.override !== undefined) any = true;
  if (!any) return decide(ps, results, reason);
  const eff = ps.map((p, i) => {
    const o = results[i]?.override;
    return o === undefined || o.limit === 0 ? p : { ...p, limit: o.limit };
  });
  const d = decide(eff, results, reason);
  // Parts are in policy order: enforced ones in `policies`, shadowed beside them in `shadowed`.
  const parts = d.policies.slice();
  const shadowed = d.shadowed?.slice();
  let until = Number.POSITIVE_INFINITY;
  for (let i = 0, e = 0, s = 0; i < results.length; i++) {
    const apart = Array.isArray(mask) && mask[i] === true;
    const list = apart ? shadowed! : parts;
    const at = apart ? s++ : e++;
    const o = results[i]!.override;
    if (o === undefined || list[at] === undefined) continue;
    list[at] = { ...list[at]!, override: { limit: o.limit, until: o.until } } as PolicyDecision;
    until = Math.min(until, o.until);
  }
  const binding = parts[d.policies.indexOf(d.binding)] ?? d.binding;
  const out: Decision = { ...d, policies: parts, binding, override: { until } };
  return shadowed === undefined ? out : { ...out, shadowed };
}

/** `plainDecision` of one policy (decision.ts `singleOf`), with the override it ran on. */
function single(
  p: Policy,
  r: PolicyResult,
  o: NonNullable<PolicyResult['override']>,
  reason: DecisionReason | undefined,
): Decision {
  const part: PolicyDecision = {
    name: p.name,
    kind: p.kind,
    limit: o.limit === 0 ? p.limit : o.limit,
    windowMs: p.windowMs,
    allowed: Boolean(r.allowed),
    remaining: r.remaining,
    resetAfterMs: r.resetAfterMs,
    retryAfterMs: r.retryAfterMs,
    delayMs: r.delayMs,
    override: o,
  };
  const d: Decision = { ...singleOf(part, r), override: { until: o.until } };
  return reason === undefined ? d : { ...d, reason };
}
