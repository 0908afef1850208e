// The Policy value a factory returns, once its options are checked (define.ts): the name, the
// key id and the frozen parameters.
import { FloodgateError } from '../errors.js';
import { sha256Base64url } from '../hash.js';
import type { Policy } from '../types.js';
import type { PolicyKindRow } from './kinds.js';

// Structured Field strings carry printable ASCII only; a name is also used in problem bodies.
const NAME = /^[\x20-\x7e]{1,64}$/;

function shortDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * The key suffix: the kind's tag and 30 bits of a hash of what the policy counts (`tb:Xk3_9`), so
 * keys stay short whatever the limits: with a 7-character identity and the default prefix the key
 * fits 28 bytes (Redis's 32-byte allocation class). What it counts is the kind, the name when one
 * was given, and the window (fixedWindow, slidingWindow, slidingWindowLog), the interval
 * (tokenBucket, leakyBucket) or the period and time zone (quota). Not the limit, a bucket's burst
 * or queue: those are read at each decision (they travel in `params`), so a new limit, a tier
 * switch or a limit computed per request keeps the identity's count and decides from it
 * (docs/algorithms.md, "Keys, and a limit that changes"). A default name (`'100-per-1m'`) is
 * derived from the limit and so is not hashed; two explicit names are two counts. `blockFor` and
 * `shadow` are not hashed either: they change nothing of what is counted. Two distinct policies of
 * one kind under one prefix collide with odds of 2^-30.
 */
function policyId(
  row: PolicyKindRow,
  windowMs: number,
  given: string | undefined,
  calendar?: Calendar,
): string {
  // JSON keeps the fields apart whatever a name holds, and its leading '[' keeps every input
  // apart from the ids of earlier releases (`<kind>:<params>`, policies/migrate.ts
  // `legacyPolicyId`), which hashed the limits: a 0.1 key is read by 1.0 only with
  // `migrateKeys: '0.1'`, which decodes it in 0.1's format.
  const what = JSON.stringify([
    row.kind,
    windowMs,
    calendar?.per ?? null,
    calendar?.timeZone ?? null,
    given ?? null,
  ]);
  return `${row.tag}:${sha256Base64url(what).slice(0, 5)}`;
}

type Calendar = NonNullable<Policy['calendar']>;

/**
 * The frozen Policy of checked options: its name (given, or e.g. `'100-per-1m'`), its key id (of
 * what it counts, not of its limit: see `policyId`), and `params`, the numbers the kernel and the
 * Lua fragment run on; a quota's `calendar` too.
 */
export function buildPolicy(
  row: PolicyKindRow,
  given: unknown,
  limit: number,
  windowMs: number,
  capacity: number,
  params: [number, number, number] | [number, number, number, number],
  calendar?: Calendar,
  blockForMs?: number,
): Policy {
  const kind = row.kind;
  let name =
    calendar === undefined
      ? `${limit}-per-${shortDuration(windowMs)}`
      : `${limit}-per-${calendar.per}`;
  if (given !== undefined) {
    if (typeof given !== 'string' || !NAME.test(given)) {
      throw new FloodgateError(
        'INVALID_POLICY',
        `${kind}: name must be 1-64 printable ASCII characters`,
      );
    }
    name = given;
  }
  for (const p of params) {
    if (!Number.isSafeInteger(p)) {
      throw new FloodgateError(
        'INVALID_POLICY',
        `${kind}: limit × window is too large to count exactly`,
      );
    }
  }
  const policy: Policy = {
    kind,
    name,
    id: policyId(row, windowMs, given as string | undefined, calendar),
    limit,
    windowMs,
    capacity,
    params: Object.freeze(params),
  };
  // Only a quota has a calendar, only a blocking policy blockForMs: the others keep their shape
  // (and the hot path) they had.
  const extra: { calendar?: Calendar; blockForMs?: number } = {};
  if (calendar !== undefined) extra.calendar = Object.freeze({ ...calendar });
  if (blockForMs !== undefined) extra.blockForMs = blockForMs;
  if (calendar === undefined && blockForMs === undefined) return Object.freeze(policy);
  return Object.freeze({ ...policy, ...extra });
}
