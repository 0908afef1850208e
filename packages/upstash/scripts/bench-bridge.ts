// The bridge of scripts/bench.ts in a process of its own, as the REST endpoint is a server apart
// from the app: prints `{ url, token }` once listening, stops when its parent closes stdin.
import { startRedisHttpBridge } from '@floodgate/testkit/redis';

const bridge = await startRedisHttpBridge({ port: Number(process.argv[2]) });
process.stdout.write(`${JSON.stringify({ url: bridge.url, token: bridge.token })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void bridge.close().then(() => process.exit(0));
});
