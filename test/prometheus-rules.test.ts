import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { metricsInExpression, registeredMetricSeries } from '../tools/lib/metric-names.js';
import { repoRoot } from '../tools/lib/processes.js';

interface Rule {
  alert?: string;
  expr: string;
  annotations?: Record<string, string>;
}
interface Panel {
  id: number;
  title: string;
  type: string;
  targets?: { expr: string }[];
}

const rulesFile = join(repoRoot, 'deploy/prometheus/alerts.yml');
const rules = (parse(readFileSync(rulesFile, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (g) => g.rules,
);
const alerts = rules.filter((r): r is Rule & { alert: string } => Boolean(r.alert));
const dashboard = JSON.parse(readFileSync(join(repoRoot, 'deploy/grafana/fleet-dashboard.json'), 'utf8')) as {
  uid: string;
  panels: Panel[];
};
const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

const promtoolMissing =
  "promtool is not installed: it comes with Debian's `prometheus` package, which bash tools/install.sh installs";

/** Runs promtool from the rules' folder, as their relative `rule_files` expect; its output when it fails. */
function promtool(...args: string[]): void {
  const run = spawnSync('promtool', args, { cwd: join(repoRoot, 'deploy/prometheus'), encoding: 'utf8' });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') throw new Error(promtoolMissing);
  assert.equal(run.status, 0, `promtool ${args.join(' ')}:\n${run.stdout}${run.stderr}`);
}

/** GitHub's anchor for a Markdown heading. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, '')
    .replace(/ /g, '-');

describe('deploy/prometheus and deploy/grafana', () => {
  it('promtool accepts the rules and the scrape config', () => {
    promtool('check', 'rules', 'alerts.yml');
    promtool('check', 'config', 'prometheus.yml');
  });

  it("promtool's unit tests pass, firing at least three alerts from synthetic series", () => {
    promtool('test', 'rules', 'alerts.test.yml');
    const tests = parse(readFileSync(join(repoRoot, 'deploy/prometheus/alerts.test.yml'), 'utf8')) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const fired = new Set(
      tests.tests.flatMap((t) => t.alert_rule_test.filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)),
    );
    assert.ok(fired.size >= 3, `only ${[...fired].join(', ')} fire`);
    for (const name of fired)
      assert.ok(
        alerts.some((a) => a.alert === name),
        `${name} is no alert of alerts.yml`,
      );
  });

  it('watches only metrics some Fleet process registers (or Prometheus: up)', () => {
    const registered = registeredMetricSeries();
    registered.add('up');
    const used = [
      ...rules.map((r) => ({ where: `alerts.yml ${r.alert ?? r.expr}`, expr: r.expr })),
      ...queries.map((q) => ({ where: `dashboard panel ${q.panel}`, expr: q.expr })),
    ];
    for (const { where, expr } of used) {
      const names = metricsInExpression(expr);
      assert.ok(names.length > 0, `${where} selects no Fleet metric`);
      for (const name of names) assert.ok(registered.has(name), `${where}: ${name} is registered by no process`);
    }
  });

  it('gives every alert a summary, a description and a runbook section in docs/operations.md', () => {
    const operations = readFileSync(join(repoRoot, 'docs/operations.md'), 'utf8');
    const anchors = new Set([...operations.matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1]!)));
    for (const a of alerts) {
      assert.ok(a.annotations?.['summary'], `${a.alert} has no summary`);
      assert.ok(a.annotations['description'], `${a.alert} has no description`);
      const runbook = /^docs\/operations\.md#([\w-]+)$/.exec(a.annotations['runbook'] ?? '');
      assert.ok(runbook, `${a.alert}: runbook ${a.annotations['runbook']} is not a section of docs/operations.md`);
      assert.ok(anchors.has(runbook[1]!), `${a.alert}: docs/operations.md has no section #${runbook[1]}`);
    }
  });

  it('charts every metric an alert watches, each panel with a unique id and a query', () => {
    const charted = new Set(queries.flatMap((q) => metricsInExpression(q.expr)));
    for (const a of alerts)
      for (const name of metricsInExpression(a.expr)) assert.ok(charted.has(name), `${a.alert}: ${name} not charted`);
    const ids = dashboard.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length, 'panel ids repeat');
    for (const p of dashboard.panels.filter((x) => x.type !== 'row'))
      assert.ok(p.targets?.length, `panel ${p.title} has no query`);
  });
});
