// The store's `kind` (the `floodgate.store` attribute) on the built bundle, where class names
// are the bundler's: `iovalkey`, not ioredis's kind it inherits nor a class name.
import { Valkey } from 'iovalkey';
import { expect, it } from 'vitest';
import { IoValkeyStore } from '../dist/index.js';

it('IoValkeyStore is of kind iovalkey', () => {
  const client = new Valkey({ lazyConnect: true, port: 1 });
  expect(new IoValkeyStore(client).kind).toBe('iovalkey');
  client.disconnect();
});
