import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';
import {
  ConfigError,
  configPathFromArgs,
  configPathsFromArgs,
  DatabaseConfig,
  loadConfig,
  MetricsConfig,
} from '../src/index.js';

const Schema = z.object({ database: DatabaseConfig, metrics: MetricsConfig, name: z.string() }).strict();

describe('config loading', () => {
  it('lists every problem at once, each with its path', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'fleet-cfg-')), 'c.json');
    writeFileSync(file, JSON.stringify({ database: { url: 'mysql://x' }, metrics: { port: 70000 }, extra: 1 }));
    assert.throws(
      () => loadConfig(Schema, file),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        const text = err.problems.join('\n');
        for (const p of ['database.url', 'metrics.port', 'name', 'extra'])
          assert.match(text, new RegExp(p), `mentions ${p}`);
        assert.equal(err.file, file);
        return true;
      },
    );
  });

  it('reports unreadable JSON with the file name', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'fleet-cfg-')), 'bad.json');
    writeFileSync(file, '{ not json');
    assert.throws(
      () => loadConfig(Schema, file),
      (err: unknown) => err instanceof ConfigError && err.message.includes(file),
    );
  });

  it('takes the file from --config, then FLEET_CONFIG, else explains what to pass', () => {
    assert.equal(configPathFromArgs(['node', 'x', '--config', 'a.json'], {}), 'a.json');
    assert.equal(configPathFromArgs(['node', 'x'], { FLEET_CONFIG: 'b.json' }), 'b.json');
    assert.throws(() => configPathFromArgs(['node', 'x'], {}), /--config/);
  });

  it('reads every --config in order, else FLEET_CONFIG, and refuses one that names no file', () => {
    const argv = ['node', 'x', '--config', 'a.json', '--config', 'b.json'];
    assert.deepEqual(configPathsFromArgs(argv, { FLEET_CONFIG: 'c.json' }), ['a.json', 'b.json']);
    assert.deepEqual(configPathsFromArgs(['node', 'x'], { FLEET_CONFIG: 'c.json' }), ['c.json']);
    assert.throws(() => configPathsFromArgs(['node', 'x'], {}), /--config/);
    assert.throws(() => configPathsFromArgs(['node', 'x', '--config', 'a.json', '--config'], {}), /names no file/);
    assert.throws(() => configPathsFromArgs(['node', 'x', '--config', '--help'], {}), /names no file/);
  });
});
