import { describe, expect, it } from 'vitest';
import * as main from '../src/index.js';
import * as internal from '../src/internal.js';
import * as store from '../src/store.js';

// The values each entry point exports (types leave no trace at run time: the API reports in
// etc/ record those). An app author's entry must not grow back the store authors' tools.
const STORE_VALUES = [
  'Breaker',
  'MAX_IDENTITY_BYTES',
  'MAX_LOG_LIMIT',
  'POLICY_KINDS',
  'encodeIdentity',
  'evaluateAll',
  'evaluatePolicy',
  'policyKey',
  'toDecision',
];
const INTERNAL_VALUES = [
  'bucketKernel',
  'fixedWindowKernel',
  'newVerdict',
  'quotaKernel',
  'quotaPeriodEnd',
  'slidingWindowKernel',
  'slidingWindowLogKernel',
];
const APP_VALUES = [
  'FloodgateError',
  'createLimiter',
  'fixedWindow',
  'isFloodgateError',
  'leakyBucket',
  'parseDuration',
  'quota',
  'slidingWindow',
  'slidingWindowLog',
  'tokenBucket',
];

describe('entry points by audience', () => {
  it('@floodgate/core holds what an app author uses, and none of the store or internal tools', () => {
    for (const name of APP_VALUES) expect(main).toHaveProperty(name);
    for (const name of [...STORE_VALUES, ...INTERNAL_VALUES]) expect(main).not.toHaveProperty(name);
    for (const name of ['LUA_SOURCES', 'LIMIT_SCRIPT', 'LIMIT_SCRIPT_SHA1']) {
      expect(main).not.toHaveProperty(name);
    }
  });

  it('@floodgate/core/store holds exactly the store-author values', () => {
    expect(Object.keys(store).sort()).toEqual(STORE_VALUES);
  });

  it('@floodgate/core/internal holds the kernels and newVerdict', () => {
    for (const name of INTERNAL_VALUES) expect(internal).toHaveProperty(name);
  });
});
