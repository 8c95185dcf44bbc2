import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isNvosImage, isNvueBaseUrl, missingForNvos, nvosBuildIdOf, parseHostPort } from '../src/index.js';

describe('NVOS image names', () => {
  it('the build id is the one X.Y.Z in the name', () => {
    assert.equal(nvosBuildIdOf('nvos-amd64-25.02.4282.bin'), '25.02.4282');
    assert.equal(nvosBuildIdOf('nvos_25.06.1000'), '25.06.1000');
  });

  it('refuses names NVOS refuses, and names that do not give exactly one build', () => {
    for (const [name, why] of [
      ['nvos-25.02.4282/../x.bin', /may contain only/],
      ['nvos 25.02.4282.bin', /may contain only/],
      ['.nvos-25.02.4282.bin', /hidden/],
      ['nvos-amd64.bin', /found 0/],
      ['nvos-25.02.4282-25.02.4283.bin', /found 2/],
    ] as const) {
      assert.throws(
        () => nvosBuildIdOf(name),
        (err: unknown) => err instanceof RangeError && why.test(err.message),
        name,
      );
    }
  });
});

describe('switch NVOS endpoints', () => {
  it('parses host:port and [v6]:port', () => {
    assert.deepEqual(parseHostPort('10.0.0.5:22'), { host: '10.0.0.5', port: 22 });
    assert.deepEqual(parseHostPort('sw-a.example:2222'), { host: 'sw-a.example', port: 2222 });
    assert.deepEqual(parseHostPort('[fd00::5]:22'), { host: 'fd00::5', port: 22 });
    for (const bad of ['10.0.0.5', '10.0.0.5:0', '10.0.0.5:65536', 'fd00::5:22', 'a b:22', ''])
      assert.equal(parseHostPort(bad), undefined, bad);
  });

  it('names what the inventory lacks for an NVOS operation; the NVOS login falls back to the device credential', () => {
    const sw = {
      nodeType: 'switch_gb200_nvidia',
      nvosUrl: 'https://10.0.0.5',
      nvosSsh: '10.0.0.5:22',
      nvosCredentialRef: null,
      credentialRef: 'bmc/x',
    };
    assert.deepEqual(missingForNvos(sw), []);
    assert.deepEqual(
      missingForNvos({ ...sw, nodeType: 'compute_gb200_nvidia', nvosUrl: null, nvosSsh: 'nope', credentialRef: null }),
      ['switch node type', 'NVOS NVUE URL', 'NVOS SSH endpoint', 'credential reference'],
    );
    // A URL NVUE cannot be reached at counts as missing, so an operation never starts with it.
    for (const good of ['https://10.0.0.5', 'http://127.0.0.1:8444', 'https://[fd00::5]:8443', 'https://sw-a.example/'])
      assert.equal(isNvueBaseUrl(good), true, good);
    for (const bad of ['ftp://10.0.0.5', 'https://admin:pw@10.0.0.5', 'https://10.0.0.5?x=1', '10.0.0.5', ''])
      assert.equal(isNvueBaseUrl(bad), false, bad);
    assert.deepEqual(missingForNvos({ ...sw, nvosUrl: 'ftp://10.0.0.5' }), ['NVOS NVUE URL']);
  });

  it('tells NVOS image metadata from PLDM metadata (which predates the format key)', () => {
    assert.equal(isNvosImage({ format: 'nvos', buildId: '25.02.4282' }), true);
    assert.equal(
      isNvosImage({ headerRevision: '1.3', headerUuid: 'x', releaseDateTime: null, devices: [], components: [] }),
      false,
    );
  });
});
