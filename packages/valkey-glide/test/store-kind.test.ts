// The `floodgate.store` attribute is the store's `kind`, on the built bundle (where class names
// are the bundler's).
import { createLimiter, fixedWindow } from '@floodgate/core';
import type { TelemetryTarget } from '@floodgate/core/telemetry';
import { expect, it } from 'vitest';
import { GlideStore } from '../dist/index.js';

it('GlideStore is of kind valkey-glide', () => {
  // A client that never arrives: the store is only built.
  const store = new GlideStore(new Promise<never>(() => {}));
  expect(store.kind).toBe('valkey-glide');
  let target: TelemetryTarget | undefined;
  createLimiter({
    store,
    policy: fixedWindow({ limit: 1, window: '1s' }),
    telemetry: {
      bind: (t) => {
        target = t;
        return { decided() {}, storeDuration() {}, breakerChanged() {} };
      },
    },
  });
  expect(target?.store).toBe('valkey-glide');
});
