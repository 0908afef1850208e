// Four app servers, each a separate process with its own node-redis client (redis 6, 5, 4 and
// @node-redis/client 1: a fleet mid-upgrade), share one Redis; the limits hold exactly.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type RedisServer, startRedisServer } from '@floodgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));
const NODES = 4;

interface Reply {
  id: number;
  allowed?: boolean | boolean[];
  error?: string;
}

let server: RedisServer;
const workers: ChildProcess[] = [];
const pending = new Map<number, (r: Reply) => void>();
let nextId = 0;

function ask(worker: ChildProcess, message: object): Promise<Reply> {
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, resolve);
    worker.send({ ...message, id });
  });
}

beforeAll(async () => {
  server = await startRedisServer();
  await Promise.all(
    Array.from({ length: NODES }, (_, i) => {
      const w = fork(WORKER, [], {
        execArgv: ['--import', 'tsx'],
        env: { ...process.env, REDIS_URL: server.url, CLIENT_KIND: String(i) },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      workers.push(w);
      return new Promise<void>((resolve, reject) => {
        w.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
        w.on('message', (m: Reply & { ready?: boolean }) => {
          if (m.ready) resolve();
          else pending.get(m.id)?.(m);
        });
      });
    }),
  );
}, 60_000);

afterAll(async () => {
  for (const w of workers) {
    w.removeAllListeners('exit');
    if (w.connected) w.send({ type: 'exit' });
  }
  await Promise.all(
    workers.map((w) => (w.exitCode === null ? new Promise((r) => w.once('exit', r)) : undefined)),
  );
  await server?.stop();
});

describe('four processes, four node-redis generations, one Redis', () => {
  it('tokenBucket 100/min: 380 requests in under two seconds admit 100 plus the refill, never more', async () => {
    const started = performance.now();
    const replies = await Promise.all(
      Array.from(
        { length: 380 },
        (_, i) =>
          new Promise<Reply>((resolve) => {
            setTimeout(
              () =>
                ask(workers[i % NODES]!, {
                  type: 'limit',
                  limiter: 'tokenBucket',
                  key: 'api-key-1',
                }).then(resolve),
              i * 4,
            );
          }),
      ),
    );
    const elapsedMs = performance.now() - started;
    expect(replies.filter((r) => r.error !== undefined).map((r) => r.error)).toEqual([]);
    const admitted = replies.filter((r) => r.allowed === true).length;
    expect(admitted).toBeGreaterThanOrEqual(100);
    expect(admitted).toBeLessThanOrEqual(100 + Math.ceil((elapsedMs * 100) / 60_000) + 1);
  });

  it('many keys at once, hundreds in flight per process: exact admission counts per key', async () => {
    const keys = Array.from({ length: 50 }, (_, i) => `tenant-${i}`);
    const requests = keys.flatMap((key, i) =>
      Array.from({ length: 10 }, () => ({ limiter: i % 2 === 0 ? 'manyTb' : 'manyLog', key })),
    );
    const replies = await Promise.all(
      workers.map((w, n) => {
        const order = requests
          .map((r, i) => ({ r, sort: (i * (n + 7) * 2654435761) % 4093 }))
          .sort((x, y) => x.sort - y.sort);
        return ask(w, { type: 'batch', requests: order.map((o) => o.r) }).then((reply) => ({
          reply,
          order,
        }));
      }),
    );
    const admitted = new Map<string, number>();
    for (const { reply, order } of replies) {
      expect(reply.error).toBeUndefined();
      (reply.allowed as boolean[]).forEach((ok, i) => {
        if (ok) admitted.set(order[i]!.r.key, (admitted.get(order[i]!.r.key) ?? 0) + 1);
      });
    }
    expect(keys.map((k) => admitted.get(k) ?? 0)).toEqual(
      keys.map((_, i) => (i % 2 === 0 ? 20 : 15)),
    );
  });
});
