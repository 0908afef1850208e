import { createLimiter, FloodgateError, type Limiter, type Policy } from '@floodgate/core';
import { checkOptions, durationStringMs, type OptionNames } from '@floodgate/core/internal';
import { ipKey } from '../keys/ip.js';
import { type AllowList, compileAllowList } from './allow-list.js';
import { peerOptionHint } from './peer-options.js';
import { choosePolicy } from './policy-choice.js';
import { report } from './report.js';
import type { Reserving } from './reservations.js';
import type { HeaderSettings } from './response.js';
import { checkCostOption, checkRecordCosts, resolveReserving } from './settle-options.js';
import type {
  CostOption,
  JitterBound,
  KeyFunction,
  LimiterChoice,
  RateLimitOptions,
  RateLimitRule,
} from './types.js';
import { createValidator, type Validator } from './validations.js';

/** A rule with every default applied. */
export interface ResolvedRule {
  readonly limiter: LimiterChoice;
  readonly key: KeyFunction;
  readonly cost: CostOption;
}

/** The options, validated and with defaults applied: what the engine runs on. */
export interface Settings {
  readonly rules: readonly ResolvedRule[];
  readonly headers: HeaderSettings;
  readonly exposeHeaders: boolean;
  readonly shadowHeaders: boolean;
  readonly skip: RateLimitOptions['skip'];
  /** `skipSuccessfulRequests` / `skipFailedRequests`: which finished responses are refunded. */
  readonly refundOn: { readonly success: boolean; readonly failure: boolean } | undefined;
  readonly requestWasSuccessful: NonNullable<RateLimitOptions['requestWasSuccessful']>;
  /** `settle`: reserve at the estimate, settle once the response is done. */
  readonly reserving: Reserving | undefined;
  readonly onLimited: RateLimitOptions['onLimited'];
  readonly failOpen: boolean;
  readonly onError: RateLimitOptions['onError'];
  readonly delay: boolean;
  readonly maxDelayMs: number;
  readonly maxQueued: number;
  readonly validator: Validator;
  readonly allowList: AllowList | undefined;
}

const OPTION_NAMES = {
  limiter: true,
  policy: true,
  store: true,
  prefix: true,
  onStoreError: true,
  timeoutMs: true,
  breaker: true,
  blockCache: true,
  onDecision: true,
  telemetry: true,
  rules: true,
  key: true,
  cost: true,
  settle: true,
  settleWithinMs: true,
  headers: true,
  legacyHeaders: true,
  retryAfterJitter: true,
  exposeHeaders: true,
  shadowHeaders: true,
  skip: true,
  skipSuccessfulRequests: true,
  skipFailedRequests: true,
  requestWasSuccessful: true,
  onLimited: true,
  onLimiterError: true,
  onError: true,
  delay: true,
  maxDelayMs: true,
  maxQueued: true,
  random: true,
  validate: true,
  onWarning: true,
  allowList: true,
} as const satisfies OptionNames<RateLimitOptions>;
const RULE_NAMES = {
  limiter: true,
  policy: true,
  key: true,
  cost: true,
} as const satisfies OptionNames<RateLimitRule>;
const withHint = { hint: peerOptionHint };

const invalid = (message: string): FloodgateError => new FloodgateError('INVALID_OPTION', message);

function checkFunction(value: unknown, name: string): void {
  if (value !== undefined && typeof value !== 'function')
    throw invalid(`${name} must be a function`);
}

function checkBoolean(value: unknown, name: string): void {
  if (value !== undefined && typeof value !== 'boolean')
    throw invalid(`${name} must be true or false`);
}

/** A whole number ≥ `least`, or `Infinity` (no bound: long waits are waited in chunks). */
function checkMs(value: unknown, name: string, fallback: number, least: number): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== 'number' ||
    !(value === Number.POSITIVE_INFINITY || (Number.isSafeInteger(value) && value >= least))
  ) {
    throw invalid(`${name} must be a whole number ≥ ${least} or Infinity, got ${String(value)}`);
  }
  return value;
}

function isLimiter(value: unknown): value is Limiter {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Limiter).limit === 'function' &&
    typeof (value as Limiter).peek === 'function'
  );
}

function jitterBound(value: JitterBound): number {
  let ms = Number.NaN;
  if (typeof value === 'number') ms = value;
  else if (typeof value === 'string') {
    // The duration grammar of policies, `0` included: '1.5s', '2h', '0.017m' (1020 ms exactly).
    ms = durationStringMs(value) ?? Number.NaN;
  }
  if (!Number.isFinite(ms) || ms < 0) {
    throw invalid(
      `retryAfterJitter: ${JSON.stringify(value)} is not a duration ≥ 0 (ms, or '500ms', '5s', '1.5m', '1h', '1d')`,
    );
  }
  return ms;
}

/**
 * `retryAfterJitter` as `[min, max]` ms. Throws `FloodgateError('INVALID_OPTION')` on a bound
 * that is not a duration ≥ 0, or on `min > max`.
 * @example
 * ```ts
 * import { parseJitter } from '@floodgate/http/adapter';
 *
 * parseJitter([0, '5s']); // [0, 5000]
 * parseJitter('500ms'); // [0, 500]
 * ```
 * @public
 */
export function parseJitter(value: RateLimitOptions['retryAfterJitter']): [number, number] {
  if (value === undefined) return [0, 0];
  if (Array.isArray(value)) {
    if (value.length !== 2) throw invalid('retryAfterJitter range must be [min, max]');
    const min = jitterBound(value[0]);
    const max = jitterBound(value[1]);
    if (min > max) throw invalid(`retryAfterJitter range [${min}, ${max}] ms has min > max`);
    return [min, max];
  }
  return [0, jitterBound(value as JitterBound)];
}

function buildLimiter(options: RateLimitOptions, policy: Policy | readonly Policy[]): Limiter {
  if (options.store === undefined) throw invalid('`policy` needs a `store` (or give a `limiter`)');
  const limiterOptions: Parameters<typeof createLimiter>[0] = { store: options.store, policy };
  if (options.prefix !== undefined) limiterOptions.prefix = options.prefix;
  if (options.onStoreError !== undefined) limiterOptions.onStoreError = options.onStoreError;
  if (options.timeoutMs !== undefined) limiterOptions.timeoutMs = options.timeoutMs;
  if (options.breaker !== undefined) limiterOptions.breaker = options.breaker;
  if (options.blockCache !== undefined) limiterOptions.blockCache = options.blockCache;
  if (options.onDecision !== undefined) limiterOptions.onDecision = options.onDecision;
  if (options.telemetry !== undefined) limiterOptions.telemetry = options.telemetry;
  const onError = options.onError;
  // The middleware's onError hears the store failures the limiter's fallback absorbed too.
  if (onError !== undefined) limiterOptions.onError = (error) => report(onError, error, undefined);
  return createLimiter(limiterOptions);
}

function resolveRule(
  rule: RateLimitRule,
  options: RateLimitOptions,
  defaultKey: KeyFunction,
  where: string,
): ResolvedRule {
  if ((rule.limiter === undefined) === (rule.policy === undefined)) {
    throw invalid(`${where}: give exactly one of \`limiter\` or \`policy\``);
  }
  if (
    rule.limiter !== undefined &&
    typeof rule.limiter !== 'function' &&
    !isLimiter(rule.limiter)
  ) {
    throw invalid(
      `${where}: limiter must come from createLimiter() or be a function returning one`,
    );
  }
  checkFunction(rule.key, `${where}: key`);
  checkCostOption(rule.cost, `${where}: cost`);
  const policy = rule.policy!;
  // Built lazily per choice, but a missing store is a configuration error: said at once.
  if (typeof policy === 'function' && options.store === undefined) {
    throw invalid('`policy` needs a `store` (or give a `limiter`)');
  }
  const limiter =
    rule.limiter ??
    (typeof policy === 'function'
      ? choosePolicy(policy, (chosen) => buildLimiter(options, chosen), where)
      : buildLimiter(options, policy));
  return { limiter, key: rule.key ?? defaultKey, cost: rule.cost ?? options.cost ?? 1 };
}

/** Policy names already reported by another rule would make two header members ambiguous. */
function checkDistinctNames(rules: readonly ResolvedRule[]): void {
  const seen = new Set<string>();
  for (const rule of rules) {
    if (typeof rule.limiter === 'function') continue;
    for (const p of rule.limiter.policies) {
      if (seen.has(p.name)) {
        throw invalid(
          `two rules report a policy named "${p.name}"; give the policies distinct names`,
        );
      }
      seen.add(p.name);
    }
  }
}

/** The options that only shape a limiter built from `policy`. */
export const BUILD_OPTIONS = [
  'store',
  'prefix',
  'onStoreError',
  'timeoutMs',
  'breaker',
  'blockCache',
  'onDecision',
  'telemetry',
] as const;

/**
 * `onDecision` and `telemetry`, checked here: a `policy` function builds its limiters at the
 * first request that needs one, too late to say that the option was wrong.
 */
function checkBuildHooks(options: RateLimitOptions): void {
  checkFunction(options.onDecision, 'onDecision');
  const tm = options.telemetry as { bind?: unknown } | null | undefined;
  if (
    tm !== undefined &&
    (typeof tm !== 'object' || tm === null || typeof tm.bind !== 'function')
  ) {
    throw invalid('telemetry must come from openTelemetry() or have bind()');
  }
}

/** Options that only shape a limiter built from `policy` would otherwise be silently ignored. */
function checkLimiterOptions(options: RateLimitOptions): void {
  const builds = options.policy !== undefined || options.rules?.some((r) => r.policy !== undefined);
  if (builds) return;
  const stray = BUILD_OPTIONS.filter((name) => options[name] !== undefined);
  if (stray.length > 0) {
    throw invalid(
      `${stray.join(', ')} only apply to a limiter built from \`policy\`; configure your limiter with createLimiter() instead`,
    );
  }
}

/** Validates every option at construction, before any request or store is touched. */
export function resolveOptions(options: RateLimitOptions, known: readonly string[] = []): Settings {
  if (typeof options !== 'object' || options === null) throw invalid('rateLimit options required');
  // `known`: the names of the adapter's own options, taken here too.
  const names = known.length === 0 ? OPTION_NAMES : [...Object.keys(OPTION_NAMES), ...known];
  checkOptions('', options, names, withHint);
  checkFunction(options.key, 'key');
  checkCostOption(options.cost, 'cost');
  const defaultKey = options.key ?? ipKey();

  let rules: ResolvedRule[];
  if (options.rules !== undefined) {
    if (options.limiter !== undefined || options.policy !== undefined) {
      throw invalid('give `rules`, or `limiter`/`policy`, not both');
    }
    if (!Array.isArray(options.rules) || options.rules.length === 0) {
      throw invalid('rules must be a non-empty array');
    }
    rules = options.rules.map((rule, i) => {
      if (typeof rule !== 'object' || rule === null) throw invalid(`rules[${i}] must be an object`);
      checkOptions(`rules[${i}]`, rule, RULE_NAMES, withHint);
      return resolveRule(rule, options, defaultKey, `rules[${i}]`);
    });
  } else {
    if (options.limiter === undefined && options.policy === undefined) {
      throw invalid('rateLimit needs a `limiter`, a `policy` with a `store`, or `rules`');
    }
    rules = [resolveRule(options, options, defaultKey, 'rateLimit')];
  }
  checkDistinctNames(rules);
  checkLimiterOptions(options);
  const reserving = resolveReserving(options);
  checkRecordCosts(rules, options, reserving);

  const standard = options.headers ?? 'draft-8';
  if (
    standard !== false &&
    standard !== 'draft-6' &&
    standard !== 'draft-7' &&
    standard !== 'draft-8'
  ) {
    throw invalid(
      `headers must be 'draft-6', 'draft-7', 'draft-8' or false, got ${JSON.stringify(standard)}`,
    );
  }
  checkBoolean(options.legacyHeaders, 'legacyHeaders');
  checkBoolean(options.exposeHeaders, 'exposeHeaders');
  checkBoolean(options.shadowHeaders, 'shadowHeaders');
  checkBoolean(options.delay, 'delay');
  checkFunction(options.skip, 'skip');
  checkBoolean(options.skipSuccessfulRequests, 'skipSuccessfulRequests');
  checkBoolean(options.skipFailedRequests, 'skipFailedRequests');
  checkFunction(options.requestWasSuccessful, 'requestWasSuccessful');
  const success = options.skipSuccessfulRequests === true;
  const failure = options.skipFailedRequests === true;
  checkFunction(options.onLimited, 'onLimited');
  checkFunction(options.onError, 'onError');
  checkBuildHooks(options);
  checkFunction(options.random, 'random');
  const maxDelayMs = checkMs(options.maxDelayMs, 'maxDelayMs', 30_000, 0);
  const maxQueued = checkMs(options.maxQueued, 'maxQueued', 1000, 1);
  const mode = options.onLimiterError ?? 'fail-closed';
  if (mode !== 'fail-closed' && mode !== 'fail-open') {
    throw invalid(
      `onLimiterError must be 'fail-closed' or 'fail-open', got ${JSON.stringify(mode)}`,
    );
  }

  return {
    rules,
    headers: {
      standard,
      legacy: options.legacyHeaders ?? false,
      jitterMs: parseJitter(options.retryAfterJitter),
      random: options.random ?? Math.random,
    },
    exposeHeaders: options.exposeHeaders ?? true,
    shadowHeaders: options.shadowHeaders ?? false,
    skip: options.skip,
    refundOn: success || failure ? { success, failure } : undefined,
    requestWasSuccessful: options.requestWasSuccessful ?? ((_request, status) => status < 400),
    reserving,
    onLimited: options.onLimited,
    failOpen: mode === 'fail-open',
    onError: options.onError,
    delay: options.delay ?? true,
    maxDelayMs,
    maxQueued,
    validator: createValidator(options.validate, options.onWarning),
    allowList: compileAllowList(
      options.allowList,
      rules.map((rule) => rule.key),
    ),
  };
}
