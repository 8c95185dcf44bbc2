import type { Socket } from 'node:net';
import ssh2, { type AuthContext, type Connection, type ServerChannel } from 'ssh2';
import { readResource } from './nvue-routes.js';
import { serveSftp } from './sftp-session.js';
import type { SimulatedSwitch } from './switch.js';
import { VirtualFs } from './vfs.js';

/**
 * The SSH side of one switch: password or public-key login against the switch's users,
 * a few NVOS shell commands over exec, and SFTP. It identifies as OpenSSH, as NVOS does,
 * which also lets ssh2 clients use OpenSSH's larger SFTP packets.
 */
export function sshServer(sw: SimulatedSwitch): { accept(socket: Socket): void } {
  // A server per host key: a factory reset may give the switch a new one.
  let current: { key: string; server: ssh2.Server } | undefined;
  const serverFor = (key: string) => {
    if (current?.key !== key)
      current = {
        key,
        server: new ssh2.Server(
          { hostKeys: [key], ident: 'OpenSSH_9.2p1 Debian-2+deb12u3 (NVOS simulator)' },
          (client) => serveClient(sw, client),
        ),
      };
    return current.server;
  };
  return {
    accept: (socket) => {
      coalesceWrites(socket);
      serverFor(sw.hostKey.privateKey).injectSocket(socket);
    },
  };
}

/**
 * ssh2 writes each SSH packet to the socket on its own, so the write replies to one chunk of
 * input would cost a syscall each. Corked until that chunk is handled (the next tick), they leave
 * together, and no later: a window adjust held for the rest of the event-loop turn would leave
 * the client waiting for it.
 */
function coalesceWrites(socket: Socket): void {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = ((...args: unknown[]) => {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return write(...args);
  }) as typeof socket.write;
}

function serveClient(sw: SimulatedSwitch, client: Connection): void {
  let user = '';
  client.on('error', () => undefined);
  client.on('authentication', (ctx) => {
    const ok = authenticate(sw, ctx);
    // `none` and key queries without a signature are probes, not login attempts.
    if (ctx.method === 'password' || (ctx.method === 'publickey' && ctx.signature))
      sw.recordSsh({ op: 'auth', user: ctx.username, ok, detail: ctx.method });
    if (!ok) return ctx.reject(['password', 'publickey']);
    user = ctx.username;
    ctx.accept();
  });
  client.on('ready', () => {
    client.on('session', (acceptSession) => {
      const session = acceptSession();
      session.on('exec', (accept, _reject, info) => runCommand(sw, user, info.command, accept()));
      session.on('sftp', (accept) => serveSftp(sw, user, accept()));
    });
  });
}

function authenticate(sw: SimulatedSwitch, ctx: AuthContext): boolean {
  if (ctx.method === 'password') return sw.checkPassword(ctx.username, ctx.password);
  if (ctx.method !== 'publickey' || !sw.config.users[ctx.username]) return false;
  for (const line of sw.spec.authorizedKeys ?? []) {
    const key = ssh2.utils.parseKey(line);
    if (
      key instanceof Error ||
      Array.isArray(key) ||
      key.type !== ctx.key.algo ||
      !key.getPublicSSH().equals(ctx.key.data)
    )
      continue;
    // Without a signature the client only asks whether the key would do.
    return !ctx.signature || key.verify(ctx.blob!, ctx.signature, ctx.hashAlgo) === true;
  }
  return false;
}

interface Outcome {
  code: number;
  stdout?: string;
  stderr?: string;
  /** Real milliseconds before exiting (`sleep`), for clients' timeout handling. */
  afterMs?: number;
}

/** The few commands the control plane runs on NVOS, enough to exercise exec. */
function execute(sw: SimulatedSwitch, command: string): Outcome {
  let m: RegExpExecArray | null;
  if ((m = /^nv show ((?:[\w.-]+ ?)+?)(?: -o json)?$/.exec(command))) {
    const body = readResource(sw, m[1]!.trim().split(' ').join('/'));
    return body === undefined
      ? { code: 1, stderr: `Error: ${m[1]} not found\n` }
      : { code: 0, stdout: `${JSON.stringify(body, null, 2)}\n` };
  }
  if ((m = /^ls (\S+)$/.exec(command))) {
    const entries = sw.fs.list(VirtualFs.normalise(m[1]!));
    return entries
      ? { code: 0, stdout: entries.map((e) => `${e.name}\n`).join('') }
      : { code: 2, stderr: `ls: cannot access '${m[1]}': No such file or directory\n` };
  }
  if ((m = /^sleep (\d+(?:\.\d+)?)$/.exec(command))) return { code: 0, afterMs: Number(m[1]) * 1000 };
  if ((m = /^echo ?(.*)$/.exec(command))) return { code: 0, stdout: `${m[1]}\n` };
  return { code: 127, stderr: `-bash: ${command.split(' ')[0]}: command not found\n` };
}

function runCommand(sw: SimulatedSwitch, user: string, command: string, channel: ServerChannel): void {
  const out = execute(sw, command);
  sw.recordSsh({ op: 'exec', user, ok: out.code === 0, detail: command });
  const finish = () => {
    if (out.stdout) channel.write(out.stdout);
    if (out.stderr) channel.stderr.write(out.stderr);
    channel.exit(out.code);
    channel.end();
  };
  if (!out.afterMs) return finish();
  const timer = setTimeout(finish, out.afterMs);
  timer.unref();
  channel.once('close', () => clearTimeout(timer));
}
