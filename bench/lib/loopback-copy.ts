import { spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { pipeline } from 'node:stream/promises';

// The receiving end, in its own process as the switch simulator is: counts bytes until `streams` connections have
// ended.
const sink = `
const streams = Number(process.argv[1]);
let bytes = 0, ended = 0;
const server = require('node:net').createServer((s) => {
  s.on('data', (d) => (bytes += d.length));
  s.on('end', () => {
    if (++ended === streams) { process.stdout.write(JSON.stringify({ bytes }) + '\\n'); server.close(); }
    s.end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
`;

/**
 * What the machine can move without SSH: `file` sent `copies` times over plain loopback TCP
 * connections at once (as the satellite sends one SFTP stream per switch) to another process.
 */
export async function loopbackCopyMibPerS(file: string, copies: number): Promise<number> {
  const size = (await stat(file)).size;
  const child = spawn(process.execPath, ['-e', sink, String(copies)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = (async function* () {
    let buffered = '';
    for await (const chunk of child.stdout) {
      buffered += String(chunk);
      for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
        yield JSON.parse(buffered.slice(0, i)) as { port?: number; bytes?: number };
        buffered = buffered.slice(i + 1);
      }
    }
  })();
  try {
    const { port } = (await lines.next()).value!;
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: copies }, () =>
        pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), connect({ port: port!, host: '127.0.0.1' })),
      ),
    );
    const { bytes } = (await lines.next()).value!;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (bytes !== size * copies) throw new Error(`loopback copy: ${bytes} bytes arrived, ${size * copies} sent`);
    return Number((bytes / 2 ** 20 / seconds).toFixed(1));
  } finally {
    child.kill();
  }
}
