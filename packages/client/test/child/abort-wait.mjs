// Run by abort.test.ts as its own process: a call told to wait 120 s is aborted during the wait.
// The process must then exit on its own, which it cannot while a timer or socket holds it.
import { withRetry } from '../../dist/index.js';

const [url] = process.argv.slice(2);
const controller = new AbortController();
const reason = new Error('user gave up');
const client = withRetry(fetch, {
  maxDelayMs: 300_000,
  onRetry: ({ delayMs }) => {
    console.log(`waiting ${delayMs}`);
    setTimeout(() => controller.abort(reason), 20);
  },
});
const started = Date.now();
try {
  await client(url, { signal: controller.signal });
  console.log('resolved');
} catch (error) {
  console.log(
    `rejected ${error === reason ? 'with the reason' : String(error)} after ${Date.now() - started} ms`,
  );
}
