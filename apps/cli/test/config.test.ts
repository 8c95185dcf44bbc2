import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  configPath,
  loadConfig,
  saveConfig,
  selectContext,
  setContext,
  type FleetConfig,
} from '../src/config/config-file.js';
import { resolveToken } from '../src/config/token.js';
import { UsageError } from '../src/exit-codes.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetctl-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('config file', () => {
  it('lives at FLEET_CONFIG, else under XDG_CONFIG_HOME, else ~/.config/fleet/config.yaml', () => {
    assert.equal(configPath({ FLEET_CONFIG: '/x/c.yaml' }), '/x/c.yaml');
    assert.equal(configPath({ XDG_CONFIG_HOME: '/xdg' }), '/xdg/fleet/config.yaml');
    assert.match(configPath({}), /\/\.config\/fleet\/config\.yaml$/);
  });

  it('a missing file is an empty config; a saved one reads back, owner-only', () => {
    const path = join(dir, 'a', 'config.yaml');
    assert.deepEqual(loadConfig(path), { contexts: {} });
    let config: FleetConfig = setContext({ contexts: {} }, 'dev', { hub: 'http://127.0.0.1:8080', tokenEnv: 'T' });
    config = setContext(config, 'prod', { hub: 'https://fleet.example', ca: '/ca.pem', tokenFile: '/t' });
    saveConfig(path, { ...config, currentContext: 'dev' });
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.deepEqual(loadConfig(path), {
      currentContext: 'dev',
      contexts: {
        dev: { hub: 'http://127.0.0.1:8080', tokenEnv: 'T' },
        prod: { hub: 'https://fleet.example', ca: '/ca.pem', tokenFile: '/t' },
      },
    });
  });

  it('names what is wrong in a malformed file', () => {
    const path = join(dir, 'bad.yaml');
    for (const [text, message] of [
      ['contexts: [1, 2]', /contexts must be a mapping/],
      ['contexts:\n  dev:\n    hub: http://x\n    token: abc', /contexts\.dev\.token is not a context setting/],
      ['contexts:\n  dev:\n    tokenEnv: T', /contexts\.dev\.hub is required/],
      ['contexts: {\n', /not valid YAML/],
    ] as const) {
      writeFileSync(path, text);
      assert.throws(
        () => loadConfig(path),
        (err: Error) => err instanceof UsageError && message.test(err.message),
      );
    }
  });

  it('set-context merges, keeps one token source, and checks the hub URL', () => {
    const one = setContext({ contexts: {} }, 'dev', { hub: 'http://h', tokenFile: '/t' });
    const two = setContext(one, 'dev', { tokenEnv: 'FLEET_TOKEN' });
    assert.deepEqual(two.contexts['dev'], { hub: 'http://h', tokenEnv: 'FLEET_TOKEN' });
    assert.deepEqual(setContext(two, 'dev', { ca: '/ca' }).contexts['dev'], {
      hub: 'http://h',
      tokenEnv: 'FLEET_TOKEN',
      ca: '/ca',
    });
    assert.throws(() => setContext({ contexts: {} }, 'x', { tokenEnv: 'T' }), /needs --hub/);
    assert.throws(() => setContext({ contexts: {} }, 'x', { hub: 'not a url' }), /is not a URL/);
  });

  it('selects the requested context, else the current one, and says which exist when it is unknown', () => {
    const config: FleetConfig = {
      currentContext: 'dev',
      contexts: { dev: { hub: 'http://d' }, prod: { hub: 'http://p' } },
    };
    assert.equal(selectContext(config, undefined, 'c.yaml').name, 'dev');
    assert.equal(selectContext(config, 'prod', 'c.yaml').context.hub, 'http://p');
    assert.throws(() => selectContext(config, 'qa', 'c.yaml'), /context qa is not in c\.yaml \(known: dev, prod\)/);
    assert.throws(() => selectContext({ contexts: {} }, undefined, 'c.yaml'), /no context selected/);
  });
});

describe('tokens', () => {
  it('come from the named variable or the first line of the file', () => {
    assert.equal(resolveToken({ hub: 'h', tokenEnv: 'T' }, { T: ' secret\n' }), 'secret');
    const file = join(dir, 'token');
    writeFileSync(file, 'file-secret\nignored\n');
    assert.equal(resolveToken({ hub: 'h', tokenFile: file }, {}), 'file-secret');
    assert.equal(resolveToken({ hub: 'h' }, {}), undefined);
  });

  it('a missing source is an error that says where it looked, never a token', () => {
    assert.throws(() => resolveToken({ hub: 'h', tokenEnv: 'NOPE' }, {}), /\$NOPE, which is not set/);
    assert.throws(
      () => resolveToken({ hub: 'h', tokenFile: join(dir, 'none') }, {}),
      /cannot read token file .*ENOENT/,
    );
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    assert.throws(() => resolveToken({ hub: 'h', tokenFile: empty }, {}), /is empty/);
    assert.ok(!readFileSync(join(dir, 'token'), 'utf8').includes('NOPE'));
  });
});
