// The change feed across transports: this store subscribes to nothing (no subscriber that can
// tell it died, over SSE), but its resets are published where TCP stores' subscribers listen.
import { Socket } from 'node:net';
import { fixedWindow } from '@floodgate/core';
import { keysFor, openClient, useRedisServer } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type BridgedClient, UPSTASH } from './adapters.js';

const server = useRedisServer({ beforeAll, afterAll });
let client: BridgedClient;
beforeAll(async () => {
  client = await openClient(UPSTASH, server().url);
});
afterAll(() => UPSTASH.disconnect(client));

/** A RESP connection subscribed to `channel`, collecting what arrives on it as text. */
async function subscriber(channel: string): Promise<{ text: () => string; close: () => void }> {
  const socket = new Socket();
  let text = '';
  socket.on('data', (chunk) => {
    text += chunk.toString('utf8');
  });
  await new Promise<void>((resolve) => socket.connect(server().port, '127.0.0.1', resolve));
  socket.write(`*2\r\n$9\r\nSUBSCRIBE\r\n$${Buffer.byteLength(channel)}\r\n${channel}\r\n`);
  for (let i = 0; i < 100 && !text.includes('subscribe'); i++) await sleep(10);
  return { text: () => text, close: () => socket.destroy() };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it("a reset is published on the channel in its own script, for other processes' subscribers", async () => {
  const sub = await subscriber('floodgate:changes');
  try {
    const store = UPSTASH.makeStore(client);
    const policy = fixedWindow({ limit: 1, window: '1h' });
    const keys = keysFor('feed', 'x', [policy]);
    await store.evaluate({ keys, policies: [policy], cost: 1, mode: 'limit' });
    const heard: unknown[] = [];
    const stop = store.watch!((change) => heard.push(change));
    await store.reset(keys);
    for (let i = 0; i < 100 && !sub.text().includes('message'); i++) await sleep(10);
    expect(sub.text()).toMatch(/message\r\n\$17\r\nfloodgate:changes\r\n/);
    // This store itself hears nothing: it has no subscriber to hear with.
    await sleep(100);
    expect(heard).toEqual([]);
    stop();
  } finally {
    sub.close();
  }
});

it('with changes: false a reset is a plain DEL, and nothing is published', async () => {
  const sub = await subscriber('floodgate:changes');
  try {
    const store = UPSTASH.makeStore(client, { changes: false });
    const policy = fixedWindow({ limit: 1, window: '1h' });
    const keys = keysFor('nofeed', 'x', [policy]);
    await store.evaluate({ keys, policies: [policy], cost: 1, mode: 'limit' });
    await store.reset(keys);
    await sleep(100);
    expect(sub.text()).not.toMatch(/message/);
  } finally {
    sub.close();
  }
});
