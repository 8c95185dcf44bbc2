import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import ssh2 from 'ssh2';
import type { NvosSimulator } from '@fleet/simulators';
import { pipelinedPut } from '../src/put.js';
import { SftpStatusError, SftpWriter } from '../src/sftp-wire.js';
import { PASSWORD, startSim, USER } from './helpers.js';

/** OpenSSH's SFTP server, as Debian (and NVOS) ship it; run over a pipe, without sshd. */
const OPENSSH_SFTP_SERVER = '/usr/lib/openssh/sftp-server';

describe('SFTP uploads on a channel of their own', () => {
  let dir: string;
  let image: Buffer;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sftp-wire-'));
    image = randomBytes(3 * 1024 * 1024 + 5);
    writeFileSync(join(dir, 'image.bin'), image);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Asks for 1 MiB writes: the server's limit decides. */
  const put = async (channel: Duplex, remotePath: string) => {
    const acks: number[] = [];
    const sftp = await SftpWriter.start(channel);
    await pipelinedPut(sftp, join(dir, 'image.bin'), remotePath, {
      chunkSize: 1024 * 1024,
      size: image.length,
      onAck: (b: number) => acks.push(b),
      signal: new AbortController().signal,
    });
    assert.equal(await sftp.size(remotePath), image.length);
    assert.equal(await sftp.size(`${remotePath}.absent`), undefined);
    sftp.end();
    return acks;
  };

  it(
    "writes the exact bytes through OpenSSH's sftp-server, at the write size it states",
    { skip: !existsSync(OPENSSH_SFTP_SERVER) && `${OPENSSH_SFTP_SERVER} is not installed` },
    async () => {
      const server = spawn(OPENSSH_SFTP_SERVER, [], { stdio: ['pipe', 'pipe', 'inherit'] });
      const channel = Duplex.from({ readable: server.stdout, writable: server.stdin });
      // OpenSSH states its limit through limits@openssh.com: 255 KiB.
      const acks = await put(channel, join(dir, 'copy.bin'));
      assert.equal(acks.length, Math.ceil(image.length / (255 * 1024)));
      assert.ok(readFileSync(join(dir, 'copy.bin')).equals(image));
      await new Promise((resolve) => server.once('exit', resolve));

      const again = spawn(OPENSSH_SFTP_SERVER, [], { stdio: ['pipe', 'pipe', 'inherit'] });
      const refused = await put(
        Duplex.from({ readable: again.stdout, writable: again.stdin }),
        join(dir, 'absent', 'copy.bin'),
      ).catch((err: unknown) => err);
      assert.ok(refused instanceof SftpStatusError && refused.code === 2, String(refused));
      again.kill();
    },
  );

  describe('to a server that states no limit', () => {
    let sim: NvosSimulator;
    let conn: ssh2.Client;
    before(async () => {
      sim = await startSim([{ id: 'sw1' }]);
      conn = new ssh2.Client();
      await new Promise<void>((resolve, reject) =>
        conn
          .once('ready', resolve)
          .once('error', reject)
          .connect({ ...sim.ssh('sw1'), username: USER, password: PASSWORD }),
      );
    });
    after(async () => {
      conn.end();
      await sim.close();
    });
    const channel = () =>
      new Promise<Duplex>((resolve, reject) => conn.subsys('sftp', (err, ch) => (err ? reject(err) : resolve(ch))));

    it('writes no more than the 32 KiB every server takes', async () => {
      const acks = await put(await channel(), '/host/nos-images/a.bin');
      assert.equal(acks.length, Math.ceil(image.length / (32 * 1024)));
      assert.equal(acks.at(-1), image.length);
      const file = sim.switch('sw1').fs.file('/host/nos-images/a.bin');
      assert.equal(file?.size, image.length);
      assert.equal(file?.sha256, createHash('sha256').update(image).digest('hex'));
    });
  });
});
