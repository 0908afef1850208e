// The shared example-app tests (the README's start command, the limit, the 429 contract), and
// this app's per-route limit.
import { expect, test } from 'vitest';
import { exampleAppTests } from '../../shared/app-tests.js';

exampleAppTests(import.meta.url, (url) => {
  test('the expensive route has its own, tighter limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${url()}/report`, { headers: { 'x-api-key': 'k_reports' } });
      statuses.push(r.status);
      await r.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 429]);
  });
});
