// Forks the app processes and stops them. A process that dies before it says its port fails the
// bench: a contender that cannot start is not measured as zero.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ENTRY = fileURLToPath(new URL('./server.mjs', import.meta.url));

/**
 * @param {object} spec what apps.mjs#startApp takes
 * @param {string | undefined} profileDir write a --cpu-prof profile of the server there
 * @returns {Promise<{ port: number, pid: number, cpuMicros: () => Promise<number>,
 *   stop: () => Promise<void> }>}
 */
export function forkServer(spec, profileDir) {
  const execArgv = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
  const child = fork(ENTRY, [JSON.stringify(spec)], {
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`${JSON.stringify(spec)}: exited with ${code} before listening`)),
    );
    child.once('message', ({ port }) =>
      resolve({
        port,
        pid: child.pid,
        /** The server's user + system CPU time so far, µs. */
        cpuMicros() {
          return new Promise((done) => {
            const onMessage = (m) => {
              if (m?.cpu === undefined) return;
              child.off('message', onMessage);
              done(m.cpu.user + m.cpu.system);
            };
            child.on('message', onMessage);
            child.send('cpu');
          });
        },
        async stop() {
          if (child.exitCode === null) child.send('stop');
          // A server that does not close in 5 s is killed (by its own pid).
          const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
          await exited;
          clearTimeout(timer);
        },
      }),
    );
  });
}
