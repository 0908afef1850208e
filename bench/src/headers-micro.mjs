// Per-call cost of formatRateLimitHeaders, the part of every HTTP response that serialises the
// decision. Not part of `pnpm bench`: run `node bench/src/headers-micro.mjs` after
// `pnpm --filter @floodgate/core build`. CPU time (process.cpuUsage) rather than wall time, so
// other processes on a shared machine inflate the numbers less; the median of several rounds.
import { formatRateLimitHeaders } from '@floodgate/core/headers';

const ROUNDS = Number(process.env.ROUNDS ?? 9);
const CALLS = Number(process.env.CALLS ?? 200_000);

function policy(name, limit, windowMs, remaining, resetAfterMs) {
  return {
    name,
    kind: 'fixedWindow',
    allowed: true,
    limit,
    windowMs,
    remaining,
    resetAfterMs,
    retryAfterMs: 0,
    delayMs: 0,
  };
}

// Several decisions per case, as a server sees counts and resets move between requests.
function decisions(specs) {
  return Array.from({ length: 16 }, (_, i) => {
    const policies = specs.map(([name, limit, windowMs]) =>
      policy(name, limit, windowMs, limit - 1 - i, windowMs - i * 997),
    );
    const binding = policies[0];
    return {
      allowed: true,
      limit: binding.limit,
      remaining: binding.remaining,
      resetAfterMs: binding.resetAfterMs,
      retryAfterMs: 0,
      delayMs: 0,
      policies,
      binding,
    };
  });
}

const cases = {
  'draft-8, 1 policy': [decisions([['per-ip', 100, 60_000]]), { standard: 'draft-8' }],
  'draft-8, 3 policies': [
    decisions([
      ['burst', 10, 1_000],
      ['per-ip', 100, 60_000],
      ['daily', 10_000, 86_400_000],
    ]),
    { standard: 'draft-8' },
  ],
  'draft-7, 1 policy': [decisions([['per-ip', 100, 60_000]]), { standard: 'draft-7' }],
};

let sink = 0;
function round(list, options) {
  const start = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) {
    sink += formatRateLimitHeaders(list[i & 15], options).RateLimit.length;
  }
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / CALLS;
}

for (const [label, [list, options]] of Object.entries(cases)) {
  for (let i = 0; i < 3; i++) round(list, options); // warm-up: let the JIT settle
  const ns = Array.from({ length: ROUNDS }, () => round(list, options)).sort((a, b) => a - b);
  const median = ns[ns.length >> 1];
  console.log(
    `${label.padEnd(22)} ${median.toFixed(0).padStart(6)} ns/call (CPU, median of ${ROUNDS}; min ${ns[0].toFixed(0)}, max ${ns[ns.length - 1].toFixed(0)})`,
  );
}
if (sink === 0) console.log('unreachable');
