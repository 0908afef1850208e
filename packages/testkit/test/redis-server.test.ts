import { afterAll, describe, expect, it } from 'vitest';
import {
  freePort,
  parseClusterNodes,
  type RedisServer,
  redisCommand,
  startRedisCluster,
  startRedisServer,
} from '../src/redis/index.js';

const started: RedisServer[] = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

describe('startRedisServer', () => {
  it('starts a throw-away server on a free loopback port, without persistence', async () => {
    const server = await startRedisServer();
    started.push(server);
    expect(server.host).toBe('127.0.0.1');
    expect(server.port).not.toBe(6379);
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    expect(await redisCommand(server.port, ['PING'])).toBe('PONG');
    const info = String(await redisCommand(server.port, ['INFO', 'server']));
    expect(info).toContain(`process_id:${server.pid}\r`);
    expect(await redisCommand(server.port, ['CONFIG', 'GET', 'save'])).toEqual(['save', '']);
    expect(await redisCommand(server.port, ['CONFIG', 'GET', 'appendonly'])).toEqual([
      'appendonly',
      'no',
    ]);
  });

  it('restart() keeps the port, starts a new process and loses the data', async () => {
    const server = await startRedisServer();
    started.push(server);
    await redisCommand(server.port, ['SET', 'k', 'v']);
    const pid = server.pid;
    await server.restart();
    expect(server.pid).not.toBe(pid);
    expect(await redisCommand(server.port, ['GET', 'k'])).toBe(null);
  });

  it('stop() ends the process and frees the port', async () => {
    const server = await startRedisServer();
    await server.stop();
    await expect(redisCommand(server.port, ['PING'], { timeoutMs: 500 })).rejects.toThrow();
    await expect(server.restart()).rejects.toThrow(/after stop/);
  });

  it('says how to install redis-server when it is missing, instead of skipping', async () => {
    await expect(startRedisServer({ bin: 'redis-server-that-does-not-exist' })).rejects.toThrow(
      /apt-get install redis-server.*brew install redis/,
    );
  });

  it('freePort never hands out 6379', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    expect(ports.every((p) => p > 0 && p !== 6379)).toBe(true);
  });
});

describe('startRedisCluster', () => {
  it('starts 3 masters with a replica each, serving every slot', async () => {
    const cluster = await startRedisCluster();
    try {
      expect(cluster.nodes).toHaveLength(6);
      // Every node, asked right away, already sees the final layout: 3 masters, 3 replicas.
      for (const node of cluster.nodes) {
        const info = String(await redisCommand(node.port, ['CLUSTER', 'INFO']));
        expect(info).toContain('cluster_state:ok');
        expect(info).toContain('cluster_known_nodes:6');
        const views = parseClusterNodes(
          String(await redisCommand(node.port, ['CLUSTER', 'NODES'])),
        );
        expect(views.filter((v) => v.role === 'master')).toHaveLength(3);
        expect(views.filter((v) => v.role === 'replica')).toHaveLength(3);
        expect(views.every((v) => v.trouble.length === 0)).toBe(true);
      }
      // Each master has its replica attached and online.
      const masters = cluster.nodes.slice(0, 3);
      for (const m of masters) {
        const info = String(await redisCommand(m.port, ['INFO', 'replication']));
        expect(info).toContain('connected_slaves:1');
        expect(info).toMatch(/slave0:.*state=online/);
      }
      const topology = await cluster.waitSettled();
      expect([...topology.replicasOf.keys()].sort()).toEqual(masters.map((m) => m.port).sort());
      const owner = await cluster.masterOf('{user}:x');
      expect(await redisCommand(owner.port, ['SET', '{user}:x', '1'])).toBe('OK');
    } finally {
      await cluster.stop();
    }
  }, 60_000);
});
