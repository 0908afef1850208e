// Child-process entry: one app per process, so each server has a core's worth of event loop to
// itself and no contender's garbage or JIT state leaks into another's. The parent (servers.mjs)
// passes the spec as JSON in argv and gets the port back over IPC; 'cpu' asks for the process's
// CPU time so far; 'stop' closes and exits,
// which also writes the CPU profile when the process runs under --cpu-prof.
import { startApp } from './apps.mjs';

const spec = JSON.parse(process.argv[2]);
const app = await startApp(spec);
process.on('message', async (message) => {
  // CPU time is the steadier measure on a shared machine: wall time counts other processes too.
  if (message === 'cpu') {
    process.send({ cpu: process.cpuUsage() });
    return;
  }
  if (message !== 'stop') return;
  await app.close();
  process.exit(0);
});
process.send({ port: app.port });
