import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeRoleRequirement, Role, roleAllows, roles } from '../src/index.js';

describe('token roles', () => {
  it('keeps viewer < operator < admin for the people', () => {
    const people = ['viewer', 'operator', 'admin'] as const;
    for (const [i, held] of people.entries())
      for (const [j, needed] of people.entries())
        assert.equal(roleAllows(held, needed), i >= j, `${held} on a ${needed} route`);
  });

  it('lets a facility token in only where a route names it, and an admin there too', () => {
    for (const needed of ['viewer', 'operator', 'admin'] as const)
      assert.equal(roleAllows('facility', needed), false, `facility on a ${needed} route`);
    assert.equal(roleAllows('facility', 'facility'), true);
    assert.equal(roleAllows('admin', 'facility'), true);
    assert.equal(roleAllows('operator', 'facility'), false);
    assert.equal(roleAllows('viewer', 'facility'), false);
  });

  it('takes a list of roles as any one of them', () => {
    const readers = ['viewer', 'facility'] as const;
    for (const held of roles) assert.equal(roleAllows(held, readers), held !== 'satellite', held);
    assert.equal(roleAllows('facility', ['operator']), false);
    assert.equal(roleAllows('viewer', ['operator', 'facility']), false);
    assert.equal(roleAllows('operator', ['operator', 'facility']), true);
    assert.equal(describeRoleRequirement(readers), 'viewer or facility');
    assert.equal(describeRoleRequirement('operator'), 'operator');
  });

  it('lets a satellite token only where a route names it, as a facility one', () => {
    for (const needed of ['viewer', 'operator', 'admin', 'facility'] as const)
      assert.equal(roleAllows('satellite', needed), false, `satellite on a ${needed} route`);
    assert.equal(roleAllows('satellite', ['viewer', 'satellite']), true);
  });

  it('accepts facility as a token role and nothing unknown', () => {
    assert.equal(Role.parse('facility'), 'facility');
    assert.equal(Role.safeParse('bms').success, false);
  });
});
