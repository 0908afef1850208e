import { LRUCache } from 'lru-cache';
import { FloodgateError } from './errors.js';
import { sha256Base64url, utf8Length } from './hash.js';

/**
 * Encoded identities longer than this (UTF-8 bytes) are replaced by a hash.
 * @example
 * ```ts
 * import { encodeIdentity, MAX_IDENTITY_BYTES } from '@floodgate/core/store';
 *
 * const long = 'x'.repeat(MAX_IDENTITY_BYTES + 1);
 * console.log(encodeIdentity(long).startsWith('#')); // true: hashed, so the key stays short
 * ```
 * @public
 */
export const MAX_IDENTITY_BYTES = 256;

// Characters that would break the layout: braces move the Redis Cluster hash tag, `%` is our
// escape, `#` marks a hashed identity. Lone surrogates would be replaced by U+FFFD on the way to
// Redis, making two identities one key, so they are escaped too.
const SPECIAL = /[%{}#]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function escapeChar(ch: string): string {
  const code = ch.charCodeAt(0);
  return code > 0xff
    ? `%u${code.toString(16).toUpperCase()}`
    : `%${code.toString(16).toUpperCase().padStart(2, '0')}`;
}

// Cheap screen for the common case: nothing to escape, and short enough that even 3 UTF-8 bytes
// per UTF-16 unit stay within the bound. An app passes a string it just built (a template from a
// header or an address): V8 holds that as a tree of parts (a cons string), and whichever call
// looks at its characters first pays to flatten it. `indexOf` flattens it and scans in native
// code for less than a regular expression costs to start (a CPU profile of fresh keys had the
// regex screen at a quarter of a decision), and a flattened key is hashed faster by the store's
// Map lookup that follows. `isWellFormed` finds lone surrogates, and answers a one-byte string
// without a scan.
const SURELY_SHORT = Math.floor(MAX_IDENTITY_BYTES / 3);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
type MaybeWellFormed = { isWellFormed?: () => boolean };
// Runtimes without `String.prototype.isWellFormed` (ES2024) test for lone surrogates by regex.
const wellFormed: (s: string) => boolean =
  typeof (String.prototype as MaybeWellFormed).isWellFormed === 'function'
    ? (s) => (s as unknown as Required<MaybeWellFormed>).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

/** True when `identity` encodes to itself: short, no `%{}#`, no lone surrogate. */
function plain(identity: string): boolean {
  return (
    identity.length <= SURELY_SHORT &&
    identity.indexOf('%') < 0 &&
    identity.indexOf('{') < 0 &&
    identity.indexOf('}') < 0 &&
    identity.indexOf('#') < 0 &&
    wellFormed(identity)
  );
}

// A long identity is hashed on every decision it makes, and pure-JS SHA-256 costs a few times
// node:crypto's native one: recent names are remembered, bounded by the identities' total size.
const HASHED = new LRUCache<string, string>({
  max: 4096,
  maxSize: 4 * 1024 * 1024,
  sizeCalculation: (_hashed, encoded) => encoded.length,
});

/**
 * Encodes an identity for use inside `{…}`: injective for every JavaScript string, free of braces,
 * and bounded in size (long identities become `#` + SHA-256).
 * @example
 * ```ts
 * import { encodeIdentity } from '@floodgate/core/store';
 *
 * encodeIdentity('user_42'); // 'user_42'
 * encodeIdentity('a{b}'); // 'a%7Bb%7D': braces cannot move the key to another cluster slot
 * ```
 * @public
 */
export function encodeIdentity(identity: string): string {
  if (plain(identity)) return identity;
  const encoded = identity.replace(SPECIAL, escapeChar);
  if (utf8Length(encoded) <= MAX_IDENTITY_BYTES) return encoded;
  let hashed = HASHED.get(encoded);
  if (hashed === undefined) {
    hashed = `#${sha256Base64url(encoded)}`;
    HASHED.set(encoded, hashed);
  }
  return hashed;
}

export function validateIdentity(identity: unknown): asserts identity is string {
  if (typeof identity !== 'string' || identity.length === 0) {
    throw new FloodgateError('INVALID_KEY', 'identity must be a non-empty string');
  }
}

export function validatePrefix(prefix: unknown): asserts prefix is string {
  if (typeof prefix !== 'string' || /[{}]/.test(prefix)) {
    throw new FloodgateError('INVALID_OPTION', 'prefix must be a string without "{" or "}"');
  }
}

/**
 * `<prefix>:{<identity>}:<policy id>`: every key of one identity lives in one cluster slot.
 * @example
 * The Redis key a limiter with prefix `'api'` uses for one identity and policy.
 * ```ts
 * import { tokenBucket } from '@floodgate/core';
 * import { encodeIdentity, policyKey } from '@floodgate/core/store';
 *
 * const policy = tokenBucket({ limit: 100, interval: '1m' });
 * const key = policyKey('api', encodeIdentity('user_42'), policy.id); // 'api:{user_42}:tb:…'
 * ```
 * @public
 */
export function policyKey(prefix: string, encodedIdentity: string, policyId: string): string {
  return `${prefix}:{${encodedIdentity}}:${policyId}`;
}

/**
 * The key holding a blocking policy's block (its `blockFor` penalty): the policy's key and
 * `:blk`, so it shares the identity's hash tag (one cluster slot) and `reset` deletes it with the
 * policy's key.
 * @example
 * ```ts
 * import { tokenBucket } from '@floodgate/core';
 * import { blockKey, encodeIdentity, policyKey } from '@floodgate/core/store';
 *
 * const policy = tokenBucket({ limit: 100, interval: '1m', blockFor: '15m' });
 * const key = blockKey(policyKey('api', encodeIdentity('user_42'), policy.id)); // 'api:{user_42}:tb:…:blk'
 * ```
 * @public
 */
export function blockKey(policyKeyOf: string): string {
  return `${policyKeyOf}:blk`;
}

/**
 * The key holding a policy's stored override (`limiter.override`): the policy's key and `:ovr`,
 * so it shares the identity's hash tag (one cluster slot, one shard) and the decision that reads
 * it stays one script run. `reset` leaves it: an override is the app's decision, not a count.
 * @example
 * ```ts
 * import { tokenBucket } from '@floodgate/core';
 * import { encodeIdentity, overrideKey, policyKey } from '@floodgate/core/store';
 *
 * const policy = tokenBucket({ limit: 100, interval: '1m' });
 * const key = overrideKey(policyKey('api', encodeIdentity('user_42'), policy.id)); // 'api:{user_42}:tb:…:ovr'
 * ```
 * @beta
 */
export function overrideKey(policyKeyOf: string): string {
  return `${policyKeyOf}:ovr`;
}

/**
 * A call's keys: one per policy, in order, then one block key per blocking policy, in order,
 * then, for a limiter with `overrides`, one override key per policy, then with `legacyIds`
 * (`migrateKeys: '0.1'`) each policy's 0.1 key and each blocking policy's 0.1 block key. Policies without
 * `blockFor` add none, so their calls carry exactly the keys they always did.
 */
export function callKeys(
  prefix: string,
  encodedIdentity: string,
  policies: readonly { readonly id: string; readonly blockForMs?: number }[],
  overrides = false,
  legacyIds?: readonly string[],
): string[] {
  const n = policies.length;
  const keys = new Array<string>(n);
  for (let i = 0; i < n; i++) keys[i] = policyKey(prefix, encodedIdentity, policies[i]!.id);
  for (let i = 0; i < n; i++)
    if (policies[i]!.blockForMs !== undefined) keys.push(blockKey(keys[i]!));
  if (overrides) for (let i = 0; i < n; i++) keys.push(overrideKey(keys[i]!));
  if (legacyIds !== undefined) {
    // Migrating keys from 0.1 (StoreCall.migrate): each policy's 0.1 key, then its block key.
    const first = keys.length;
    for (let i = 0; i < n; i++) keys.push(policyKey(prefix, encodedIdentity, legacyIds[i]!));
    for (let i = 0; i < n; i++)
      if (policies[i]!.blockForMs !== undefined) keys.push(blockKey(keys[first + i]!));
  }
  return keys;
}
