import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  fleetLifecycleStates,
  isFleetLifecycleState,
  lifecycleRule,
  lifecycleTable,
  LifecycleTransitionRefused,
  mainLineLifecycleStates,
  nextLifecycleStates,
  terminalLifecycleStates,
  transition,
  type FleetLifecycleState,
} from '../src/index.js';
import * as workflowSafe from '../src/workflow-safe.js';

/**
 * The legal moves, written out by hand from docs/lifecycle.md rather than derived from the table, so that a change to
 * the table must be made (and reviewed) in both places.
 */
const expected: Record<FleetLifecycleState, FleetLifecycleState[]> = {
  discovered: ['enrolling', 'quarantined', 'decommissioned'],
  enrolling: ['enrolled', 'discovered', 'failed', 'quarantined'],
  enrolled: ['burning_in', 'quarantined', 'decommissioned'],
  burning_in: ['certified', 'enrolled', 'failed', 'quarantined'],
  certified: ['burning_in', 'in_service', 'quarantined', 'decommissioned'],
  in_service: ['quarantined', 'decommissioned'],
  failed: ['enrolling', 'quarantined', 'remediating', 'rma', 'decommissioned'],
  quarantined: ['remediating', 'rma', 'decommissioned'],
  remediating: [
    'discovered',
    'enrolling',
    'enrolled',
    'burning_in',
    'certified',
    'in_service',
    'quarantined',
    'rma',
    'decommissioned',
  ],
  rma: ['discovered', 'decommissioned'],
  decommissioned: [],
};

describe('lifecycle transition table', () => {
  it('has the eleven states, main line first', () => {
    assert.deepEqual(
      [...fleetLifecycleStates],
      [
        'discovered',
        'enrolling',
        'enrolled',
        'burning_in',
        'certified',
        'in_service',
        'failed',
        'quarantined',
        'remediating',
        'rma',
        'decommissioned',
      ],
    );
    assert.deepEqual(Object.keys(expected).sort(), [...fleetLifecycleStates].sort());
  });

  it('allows or refuses every one of the 121 (from, to) pairs exactly as expected', () => {
    let checked = 0;
    for (const from of fleetLifecycleStates) {
      for (const to of fleetLifecycleStates) {
        const legal = expected[from].includes(to);
        const result = transition(from, to);
        assert.equal(result.ok, legal, `${from} → ${to} should be ${legal ? 'allowed' : 'refused'}`);
        if (result.ok) {
          assert.equal(result.state, to);
          assert.ok(result.rule.from.includes(from) && result.rule.to === to);
        } else {
          assert.equal(result.refusal.code, 'CONFLICT');
          assert.equal(result.refusal.current, from);
          assert.equal(result.refusal.requested, to);
          assert.deepEqual([...result.refusal.allowed].sort(), [...expected[from]].sort());
          assert.match(result.refusal.message, new RegExp(`^device is ${from}: it cannot move to ${to} `));
        }
        checked++;
      }
    }
    assert.equal(checked, 121);
  });

  it('lists the next states of each state as the table allows them', () => {
    for (const from of fleetLifecycleStates)
      assert.deepEqual([...nextLifecycleStates(from)].sort(), [...expected[from]].sort(), from);
  });

  it('walks the main line one step at a time and allows no skipping ahead', () => {
    for (let i = 0; i + 1 < mainLineLifecycleStates.length; i++) {
      const from = mainLineLifecycleStates[i]!;
      assert.equal(transition(from, mainLineLifecycleStates[i + 1]!).ok, true);
      for (const later of mainLineLifecycleStates.slice(i + 2))
        assert.equal(transition(from, later).ok, false, `${from} must not skip to ${later}`);
    }
  });

  it('refuses every move to the same state', () => {
    for (const s of fleetLifecycleStates) assert.equal(transition(s, s).ok, false, s);
  });

  it('makes decommissioned the one terminal state, with a refusal that says so', () => {
    assert.deepEqual(terminalLifecycleStates, ['decommissioned']);
    const r = transition('decommissioned', 'discovered');
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.refusal.message, /decommissioned is terminal/);
  });

  it('can quarantine from every state but quarantined, rma and decommissioned', () => {
    for (const s of fleetLifecycleStates)
      assert.equal(transition(s, 'quarantined').ok, !['quarantined', 'rma', 'decommissioned'].includes(s), s);
  });

  it('reaches every state from discovered, and decommissioned from every state', () => {
    const reach = (from: FleetLifecycleState) => {
      const seen = new Set<FleetLifecycleState>([from]);
      const queue = [from];
      while (queue.length)
        for (const next of nextLifecycleStates(queue.shift()!)) {
          if (seen.has(next)) continue;
          seen.add(next);
          queue.push(next);
        }
      return seen;
    };
    assert.equal(reach('discovered').size, fleetLifecycleStates.length);
    for (const s of fleetLifecycleStates) assert.ok(reach(s).has('decommissioned'), s);
  });

  it('brings a device back to service only through certification or remediation', () => {
    for (const s of fleetLifecycleStates)
      assert.equal(transition(s, 'in_service').ok, s === 'certified' || s === 'remediating', s);
  });

  it('names one rule per move, so every move has one event and one workflow', () => {
    const seen = new Set<string>();
    for (const rule of lifecycleTable)
      for (const from of rule.from) {
        assert.ok(!seen.has(`${from}>${rule.to}`), `${from} → ${rule.to} twice`);
        seen.add(`${from}>${rule.to}`);
        assert.equal(lifecycleRule(from, rule.to), rule);
      }
    assert.equal(seen.size, Object.values(expected).flat().length);
  });

  it('carries the refusal in a typed error', () => {
    const r = transition('in_service', 'enrolling');
    assert.equal(r.ok, false);
    if (r.ok) return;
    const err = new LifecycleTransitionRefused(r.refusal);
    assert.equal(err.name, 'LifecycleTransitionRefused');
    assert.equal(err.code, 'CONFLICT');
    assert.equal(err.current, 'in_service');
    assert.deepEqual(err.allowed, ['quarantined', 'decommissioned']);
    assert.match(err.message, /device is in_service: it cannot move to enrolling \(it may move to quarantined, decomm/);
  });

  it('tells its states from other strings', () => {
    assert.equal(isFleetLifecycleState('burning_in'), true);
    assert.equal(isFleetLifecycleState('active'), false);
  });

  it('is importable by workflow code from the workflow-safe entry', () => {
    assert.equal(workflowSafe.transition, transition);
    assert.equal(workflowSafe.lifecycleTable, lifecycleTable);
  });
});

describe('docs/lifecycle.md', () => {
  const doc = readFileSync(new URL('../../../docs/lifecycle.md', import.meta.url), 'utf8');
  /** Rows of the table under "## The transition table": `| event | from | to | by | why |`. */
  const documented = doc
    .split('## The transition table')[1]!
    .split('\n## ')[0]!
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((l) => l.split('|').map((c) => c.trim().replace(/`/g, '')))
    .map((c) => ({ event: c[1], from: c[2]!.split(', '), to: c[3], by: c[4] }));

  it('shows the same transition table as the code', () => {
    assert.deepEqual(
      documented,
      lifecycleTable.map((r) => ({ event: r.event, from: [...r.from], to: r.to, by: r.by })),
    );
  });
});
