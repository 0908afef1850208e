// The pictures in docs/img/, drawn from the real limiter: @floodgate/core with a MemoryStore on an
// injected clock, so every run makes the same bytes. `pnpm pictures` rewrites them; the docs
// test (checkPictures) fails when the committed files differ from what this script draws now.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createLimiter,
  fixedWindow,
  leakyBucket,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import { root } from '../packaging/workspace.mjs';
import { chart } from './svg.mjs';

const T0 = Date.UTC(2030, 0, 1); // aligned to every window below
const SEAM = 1000; // ms after T0: where a 1 s window ends and the next begins

// The same traffic for every policy: quiet, then one request every 10 ms from 800 to 1200 ms.
const BURST = Array.from({ length: 41 }, (_, i) => 800 + 10 * i);

const POLICIES = [
  ['fixedWindow', () => fixedWindow({ limit: 10, window: '1s' })],
  ['slidingWindow', () => slidingWindow({ limit: 10, window: '1s' })],
  ['slidingWindowLog', () => slidingWindowLog({ limit: 10, window: '1s' })],
  ['tokenBucket', () => tokenBucket({ limit: 10, interval: '1s' })],
  ['leakyBucket', () => leakyBucket({ limit: 10, interval: '1s', queue: 10 })],
];

async function policyPicture(name, make) {
  let t = T0;
  const limiter = createLimiter({ store: new MemoryStore({ now: () => t }), policy: make() });
  const sent = [[0, 0]];
  const admitted = [[0, 0]];
  let a = 0;
  for (const [i, at] of BURST.entries()) {
    t = T0 + at;
    const d = await limiter.limit('client');
    sent.push([at, i + 1]);
    if (d.allowed) admitted.push([at, ++a]);
  }
  sent.push([2000, BURST.length]);
  admitted.push([2000, a]);
  return chart({
    title: `${name}, limit 10 per second: ${a} of ${BURST.length} admitted`,
    xLabel: 'ms (window seam at 1000)',
    yLabel: 'requests',
    xMax: 2000,
    yMax: 45,
    vlines: [{ x: SEAM, label: 'seam' }],
    hlines: [{ y: 10, label: 'limit 10' }],
    series: [
      { name: 'sent', color: '#9aa0a6', dash: true, points: sent },
      { name: 'admitted', color: '#1a73e8', points: admitted },
    ],
  });
}

// The incident: four app servers behind a round-robin balancer, 100 a minute per key, one
// client bursting 380 requests in two seconds. Before: each server has its own store. After:
// all four share one (what a shared Redis gives them).
async function fourServersPicture() {
  const policy = () => tokenBucket({ limit: 100, interval: '1m' });
  const run = async (stores) => {
    let t = T0;
    const limiters = stores.map((s) => createLimiter({ store: s(() => t), policy: policy() }));
    const points = [[0, 0]];
    let a = 0;
    for (let i = 0; i < 380; i++) {
      t = T0 + Math.floor((i * 2000) / 380);
      if ((await limiters[i % 4].limit('api-key-1')).allowed) a++;
      points.push([i + 1, a]);
    }
    return { points, a };
  };
  const own = (now) => new MemoryStore({ now });
  let shared;
  const one = (now) => {
    shared ??= new MemoryStore({ now });
    return shared;
  };
  const before = await run([own, own, own, own]);
  const after = await run([one, one, one, one]);
  return chart({
    title: `Four servers, 100 a minute per key: ${before.a} admitted alone, ${after.a} sharing one store (100 + 2 s of refill)`,
    xLabel: 'requests sent (380 in 2 s, round robin)',
    yLabel: 'admitted',
    xMax: 380,
    yMax: 400,
    hlines: [{ y: 100, label: 'limit 100' }],
    series: [
      { name: 'before: four separate stores', color: '#d93025', points: before.points },
      { name: 'after: one shared store', color: '#1a73e8', points: after.points },
    ],
  });
}

/** Every picture: file name under docs/img → SVG text. */
export async function drawPictures() {
  const out = new Map();
  for (const [name, make] of POLICIES)
    out.set(`policy-${name}.svg`, await policyPicture(name, make));
  out.set('four-servers.svg', await fourServersPicture());
  return out;
}

/** Problems for the docs test: pictures missing or not what the script draws today. */
export async function checkPictures() {
  const problems = [];
  for (const [file, svg] of await drawPictures()) {
    let committed = null;
    try {
      committed = readFileSync(join(root, 'docs', 'img', file), 'utf8');
    } catch {}
    if (committed !== svg)
      problems.push(
        `docs/img/${file}: differs from what the pictures script draws; run \`pnpm pictures\` and commit`,
      );
  }
  if (problems.length === 0) console.log('pictures in docs/img match the script');
  return problems;
}

if (process.argv.includes('--write')) {
  for (const [file, svg] of await drawPictures()) {
    writeFileSync(join(root, 'docs', 'img', file), svg);
    console.log(`wrote docs/img/${file}`);
  }
}
