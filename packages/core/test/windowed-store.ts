// A MapStore behind a send window (redis/window.ts): the window and the limiter's timer are what
// the tests using it test; a subclass says when a sent call's answer comes (`deliver`).
import { SendWindow } from '../src/redis/window.js';
import type { PolicyResult, Store, StoreCall } from '../src/store.js';
import { MapStore } from './map-store.js';

export abstract class WindowedStore implements Store {
  readonly remote = true;
  readonly inner = new MapStore();
  /** Calls that reached the wire, with the deadline each was sent with. */
  readonly sent: { call: StoreCall; deadline: number | undefined }[] = [];
  readonly #window: SendWindow;

  constructor(max: number) {
    this.#window = new SendWindow((call, deadline) => {
      this.sent.push({ call, deadline });
      const answer = this.inner.evaluate(call);
      return this.deliver().then(() => answer);
    }, max);
  }

  /** Resolves when the answer of a call just sent arrives. */
  protected abstract deliver(): Promise<void>;

  evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    const budget = call.extendable === true ? call.deadline! - performance.now() : undefined;
    return this.#window.submit(call, undefined, budget);
  }

  waitUntil(call: StoreCall): number | undefined {
    return this.#window.waitUntil(call);
  }

  reset(keys: readonly string[]): Promise<void> {
    return this.inner.reset(keys);
  }
}
