import { describe, expect, it } from 'vitest';
import * as concurrency from '../src/concurrency.js';
import * as main from '../src/index.js';
import * as internal from '../src/internal.js';
import * as slices from '../src/slices.js';
import * as store from '../src/store.js';
import * as telemetry from '../src/telemetry.js';

// The values each entry point exports (types leave no trace at run time: the API reports in
// etc/ record those). An app author's entry must not grow back the store authors' tools.
const STORE_VALUES = [
  'Breaker',
  'MAX_IDENTITY_BYTES',
  'MAX_LOG_LIMIT',
  'POLICY_KINDS',
  'blockKey',
  'encodeIdentity',
  'evaluateAll',
  'evaluatePolicy',
  'isLeaseStore',
  'isOverrideStore',
  'legacyPolicyId',
  'overrideKey',
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

  it('@floodgate/core/concurrency holds the concurrency limiter, and the main entry does not', () => {
    expect(Object.keys(concurrency).sort()).toEqual(['createConcurrencyLimiter']);
    expect(main).not.toHaveProperty('createConcurrencyLimiter');
    expect(main).not.toHaveProperty('isLeaseStore');
  });

  it('@floodgate/core/slices holds withSlices alone, and the main entry does not', () => {
    expect(Object.keys(slices).sort()).toEqual(['withSlices']);
    expect(main).not.toHaveProperty('withSlices');
  });

  it('@floodgate/core/telemetry holds openTelemetry alone; the main entry never loads OpenTelemetry', async () => {
    expect(Object.keys(telemetry).sort()).toEqual(['openTelemetry']);
    expect(main).not.toHaveProperty('openTelemetry');
    const { readFile } = await import('node:fs/promises');
    const { fileURLToPath } = await import('node:url');
    // Every module the main entry reaches (the source imports, followed): none is telemetry.ts
    // or @opentelemetry/api, so an app (or an edge bundle) without it never pulls it in.
    const seen = new Set<string>();
    const visit = async (url: URL): Promise<void> => {
      if (seen.has(url.href)) return;
      seen.add(url.href);
      const text = await readFile(fileURLToPath(url), 'utf8');
      expect(text, url.pathname).not.toMatch(/from '@opentelemetry\//);
      for (const m of text.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g)) {
        await visit(new URL(`${m[1]}.ts`, url));
      }
    };
    await visit(new URL('../src/index.ts', import.meta.url));
    expect([...seen].some((u) => u.endsWith('/telemetry.ts'))).toBe(false);
    expect(seen.size).toBeGreaterThan(10);
  });

  it('@floodgate/core/internal holds the kernels and newVerdict', () => {
    for (const name of INTERNAL_VALUES) expect(internal).toHaveProperty(name);
  });
});
