// A process that stalls (CPU starved, a long GC) is not a silent store: when it runs again, the
// answers that came meanwhile are read before the limiter's timer decides, so calls the send
// window held back are sent, not given up. The answers here come through a real loopback socket,
// so the order of the event loop's phases (timers, then I/O) is what is tested.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLimiter, fixedWindow } from '../src/index.js';
import { WindowedStore } from './windowed-store.js';

/** Busy-waits: the whole process, timers and sockets included, does nothing else meanwhile. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

let server: Server;
let port: number;
/** Set by a test: the server stalls the process this long right after echoing the first line. */
let stallOnce = 0;

beforeAll(async () => {
  server = createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('data', (data) => {
      socket.write(data);
      if (stallOnce > 0) {
        const ms = stallOnce;
        stallOnce = 0;
        stall(ms);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A store whose every answer is a line echoed by the server: it arrives as socket I/O. */
class EchoStore extends WindowedStore {
  readonly #waiting = new Map<number, () => void>();
  #next = 0;
  #socket: Socket | undefined;

  async open(): Promise<void> {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    let buffered = '';
    socket.on('data', (data) => {
      buffered += String(data);
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) this.#waiting.get(Number(line))?.();
    });
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    this.#socket = socket;
  }

  close(): void {
    this.#socket?.destroy();
  }

  protected deliver(): Promise<void> {
    const id = this.#next++;
    return new Promise<void>((resolve) => {
      this.#waiting.set(id, resolve);
      this.#socket!.write(`${id}\n`);
    });
  }
}

describe('the send window after this process stalled', () => {
  it('answers read after the stall keep the held calls going: they are sent and decided by the store', async () => {
    const store = new EchoStore(1);
    await store.open();
    try {
      const limiter = createLimiter({
        store,
        policy: fixedWindow({ limit: 100, window: '1h' }),
        timeoutMs: 100,
        breaker: false,
        onStoreError: 'deny',
      });
      // One on the wire, two held. The server echoes the first, then the process stalls for
      // 2.5 × timeoutMs: every timer is due when it runs again, the echo waits in the socket.
      stallOnce = 250;
      const ds = await Promise.all(['a', 'b', 'c'].map((id) => limiter.limit(id)));
      expect(ds.map((d) => d.reason ?? 'store')).toEqual(['store', 'store', 'store']);
      expect(store.sent).toHaveLength(3);
      // (A store that stays silent still loses them after timeoutMs: send-window.test.ts.)
    } finally {
      store.close();
    }
  });
});
