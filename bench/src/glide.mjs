// Valkey GLIDE: which script transport GlideStore should use (EVALSHA through customCommand,
// GLIDE's Script + invokeScript, or a Valkey Function with FCALL), and GlideStore against
// rate-limiter-flexible's RateLimiterValkeyGlide. Prints Markdown; writes nothing.
// Run: pnpm --filter @floodgate/bench bench:glide
import { createLimiter, encodeScriptArgs, fixedWindow, scriptForKinds } from '@floodgate/core';
import { commandCalls, delta, startRedisServer } from '@floodgate/testkit';
import { GlideStore } from '@floodgate/valkey-glide';
import { GlideClient, Logger, Script } from '@valkey/valkey-glide';
import { RateLimiterValkeyGlide } from 'rate-limiter-flexible';
import { compare, concurrent, formatOps, sequential, table } from './measure.mjs';

Logger.setLoggerConfig('off');
const ITERATIONS = Number(process.env.BENCH_GLIDE_ITERATIONS ?? 20_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const KEYS = Array.from({ length: 1000 }, (_, i) => `u${i}`);
const LIMIT = 1_000_000_000;

// RateLimiterValkeyGlide registers its Function with `server.register_function`, which only Valkey
// has: BENCH_SERVER=valkey-server runs everything on Valkey (redis-server 7 by default).
const server = await startRedisServer({ bin: process.env.BENCH_SERVER ?? 'redis-server' });
const client = await GlideClient.createClient({
  addresses: [{ host: '127.0.0.1', port: server.port }],
  requestTimeout: 10_000,
});
const policy = fixedWindow({ limit: LIMIT, window: '1m' });
const { source, sha1 } = scriptForKinds(['fixedWindow']);
const argsOf = (key) =>
  encodeScriptArgs({ keys: [`fg:{${key}}:w`], policies: [policy], cost: 1, mode: 'limit' });
const script = new Script(source);
// The script body uses KEYS and ARGV: as a function's parameters they mean the same.
const library = `#!lua name=floodgate_bench\nredis.register_function('fg_fixed', function(KEYS, ARGV)\n${source}\nend)`;

const decided = (reply) => ({ allowed: Array.isArray(reply) && Number(reply[0]) === 1 });
const transports = [
  {
    name: 'EVALSHA (customCommand; EVAL after NOSCRIPT)',
    setup: async () => {
      await client.customCommand(['SCRIPT', 'LOAD', source]);
      return {
        decide: async (k) =>
          decided(await client.customCommand(['EVALSHA', sha1, '1', `fg:{${k}}:w`, ...argsOf(k)])),
      };
    },
  },
  {
    name: 'Script + invokeScript',
    setup: async () => ({
      decide: async (k) =>
        decided(await client.invokeScript(script, { keys: [`fg:{${k}}:w`], args: argsOf(k) })),
    }),
  },
  {
    name: 'FUNCTION LOAD + FCALL',
    setup: async () => {
      await client.customCommand(['FUNCTION', 'LOAD', 'REPLACE', library]);
      return {
        decide: async (k) =>
          decided(
            await client.customCommand(['FCALL', 'fg_fixed', '1', `fg:{${k}}:w`, ...argsOf(k)]),
          ),
      };
    },
  },
];

async function rows(contenders, label) {
  const out = [];
  for (const inFlight of [1, 16, 256]) {
    const run = async (decide) => {
      for (const k of KEYS.slice(0, 200)) await decide(k); // warm-up
      const r =
        inFlight === 1
          ? await sequential(decide, KEYS, ITERATIONS)
          : await concurrent(decide, KEYS, ITERATIONS, inFlight);
      return { ...r, iterations: ITERATIONS };
    };
    const samples = await compare(contenders, REPEATS, run, (denied) => denied === 0);
    for (const c of contenders)
      out.push([c.name, String(inFlight), formatOps(samples.get(c.name))]);
  }
  console.log(`\n### ${label}\n`);
  console.log(table(['transport', 'in flight', 'decisions/s'], out, ['l', 'r', 'r']));
}

/** Commands the server counted for one decision right after its cache was emptied. */
async function recovery(name, flush, decide) {
  await decide('warm');
  await client.customCommand(flush);
  const before = await commandCalls(server.port);
  await decide('after-flush');
  const d = delta(before, await commandCalls(server.port));
  return [
    name,
    Object.entries(d)
      .map(([c, n]) => `${c} ${n}`)
      .join(', '),
  ];
}

try {
  await rows(transports, 'Script transports on GLIDE (fixedWindow, one client)');
  const [, invoke, fcall] = await Promise.all(transports.map((t) => t.setup()));
  console.log('\n### The first decision after the cache is emptied\n');
  const flushScripts = ['SCRIPT', 'FLUSH'];
  const recoveryRows = [
    await recovery(transports[0].name, flushScripts, async (k) => {
      // What GlideStore does: EVALSHA, and EVAL with the source on NOSCRIPT.
      const tail = ['1', `fg:{${k}}:w`, ...argsOf(k)];
      try {
        await client.customCommand(['EVALSHA', sha1, ...tail]);
      } catch {
        await client.customCommand(['EVAL', source, ...tail]);
      }
    }),
    await recovery(transports[1].name, flushScripts, invoke.decide),
    await recovery(transports[2].name, ['FUNCTION', 'FLUSH'], async (k) => {
      try {
        await fcall.decide(k);
      } catch {
        await client.customCommand(['FUNCTION', 'LOAD', 'REPLACE', library]);
        await fcall.decide(k);
      }
    }),
  ];
  console.log(table(['transport', 'commands the server ran'], recoveryRows, ['l', 'l']));

  const flush = () => client.customCommand(['FLUSHALL', 'SYNC']);
  const glideStore = {
    name: 'GlideStore, fixedWindow',
    setup: async () => {
      await flush();
      const limiter = createLimiter({ store: new GlideStore(client), policy });
      return { decide: (k) => limiter.limit(k) };
    },
  };
  const rlf = {
    name: 'rate-limiter-flexible RateLimiterValkeyGlide',
    setup: async () => {
      await flush();
      const rl = new RateLimiterValkeyGlide({ storeClient: client, points: LIMIT, duration: 60 });
      return { decide: (k) => rl.consume(k) };
    },
  };
  const rlfError = await rlf
    .setup()
    .then(({ decide }) => decide('probe'))
    .then(
      () => undefined,
      (e) => (e instanceof Error ? e.message : String(e)),
    );
  if (rlfError !== undefined) console.log(`\nRateLimiterValkeyGlide cannot run here: ${rlfError}`);
  await rows(
    rlfError === undefined ? [glideStore, rlf] : [glideStore],
    'GlideStore against rate-limiter-flexible on the same GLIDE client',
  );
} finally {
  script.release();
  client.close();
  await server.stop();
}
