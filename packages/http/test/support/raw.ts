import { connect } from 'node:net';

/**
 * Writes one HTTP/1.1 request exactly as given (any request target, e.g. absolute-form
 * `http://anything/search`, which fetch cannot send) and resolves the response's status code.
 */
export function rawRequest(
  url: string,
  method: string,
  target: string,
  headers: Record<string, string> = {},
): Promise<number> {
  const { hostname, port } = new URL(url);
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ''));
    let response = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      response += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(response);
      if (status) resolve(Number(status[1]));
      else reject(new Error(`no status line in ${JSON.stringify(response.slice(0, 80))}`));
    });
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}
