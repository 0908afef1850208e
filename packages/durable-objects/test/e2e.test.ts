import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundle, COMPATIBILITY_DATE, startWorkerd } from './helpers/workerd.js';

// The example Worker (example/worker.ts: Hono, @floodgate/http, 20 per IP) run as three Workers,
// three isolates, all bound to one Durable Object namespace: the isolates of one Worker on
// Cloudflare. Hundreds of requests at once, spread over them, must get exactly 20 admissions per IP.
const ISOLATES = 3;
let mf: Miniflare;

beforeAll(async () => {
  const script = await bundle('test/fixtures/e2e-worker.ts');
  const workers = Array.from({ length: ISOLATES }, (_, i) => ({
    name: `edge-${i}`,
    modules: true,
    script,
    compatibilityDate: COMPATIBILITY_DATE,
    routes: [`edge-${i}.test/*`],
    // The first Worker hosts the class; the others bind the same namespace through it.
    durableObjects: {
      FLOODGATE:
        i === 0
          ? { className: 'FloodgateObject', useSQLite: true }
          : { className: 'FloodgateObject', scriptName: 'edge-0', useSQLite: true },
    },
  }));
  ({ mf } = await startWorkerd(workers));
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
});

interface Answer {
  readonly ip: string;
  readonly status: number;
  readonly headers: Headers;
}

async function send(i: number, ip: string): Promise<Answer> {
  const res = await mf.dispatchFetch(`http://edge-${i % ISOLATES}.test/`, {
    headers: { 'cf-connecting-ip': ip },
  });
  await res.arrayBuffer();
  return { ip, status: res.status, headers: res.headers as unknown as Headers };
}

describe('example Worker: 20 per IP across isolates', () => {
  it('admits exactly 20 of 250 parallel requests per IP, and answers the rest 429 with the contract', async () => {
    const ips = ['203.0.113.7', '198.51.100.23', '2001:db8:1::5'];
    const sends: Promise<Answer>[] = [];
    for (let i = 0; i < 250; i++) for (const ip of ips) sends.push(send(i, ip));
    const answers = await Promise.all(sends);

    const isolates = new Set(answers.map((a) => a.headers.get('x-isolate')));
    expect(isolates.size, 'answered by distinct isolates').toBe(ISOLATES);
    for (const ip of ips) {
      const mine = answers.filter((a) => a.ip === ip);
      const ok = mine.filter((a) => a.status === 200);
      const denied = mine.filter((a) => a.status === 429);
      expect(ok.length, `admitted for ${ip}`).toBe(20);
      expect(denied.length, `denied for ${ip}`).toBe(230);
      for (const a of ok) {
        expect(a.headers.get('ratelimit-policy')).toBe('"per-ip";q=20;w=3600');
        expect(a.headers.get('ratelimit')).toMatch(/^"per-ip";r=\d+;t=\d+$/);
      }
      const remaining = ok.map((a) => Number(/r=(\d+)/.exec(a.headers.get('ratelimit')!)![1]));
      expect(
        remaining.sort((a, b) => a - b),
        'each admission saw its own count',
      ).toEqual(Array.from({ length: 20 }, (_, k) => k));
      for (const a of denied) {
        const retry = Number(a.headers.get('retry-after'));
        expect(Number.isInteger(retry) && retry > 0 && retry <= 3600, `Retry-After ${retry}`).toBe(
          true,
        );
        expect(a.headers.get('ratelimit')).toMatch(/^"per-ip";r=0;t=\d+$/);
        expect(a.headers.get('ratelimit-policy')).toBe('"per-ip";q=20;w=3600');
        expect(a.headers.get('content-type')).toContain('application/problem+json');
      }
    }
  }, 120_000);
});
