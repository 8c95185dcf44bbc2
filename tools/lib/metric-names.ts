import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { repoRoot } from './processes.js';

type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary';

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'test' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

/** The series a metric of a type exposes: a histogram its buckets, sum and count. */
function seriesOf(name: string, type: MetricType): string[] {
  if (type === 'histogram') return [`${name}_bucket`, `${name}_sum`, `${name}_count`];
  if (type === 'summary') return [name, `${name}_sum`, `${name}_count`];
  return [name];
}

/**
 * Every metric series Fleet's processes register, read from their source: each `new Counter|Gauge|Histogram|Summary`
 * or `labelledCounter` (@fleet/config) with a literal `name`, and Node's default metrics (prom-client's) under each
 * prefix a `startMetricsServer` call gives. Alerts and dashboards are checked against it, so a renamed metric cannot
 * leave them watching nothing.
 */
export function registeredMetricSeries(): Set<string> {
  const series = new Set<string>();
  const files = ['apps', 'packages'].flatMap((d) => sourceFiles(join(repoRoot, d)));
  const prefixes = new Set<string>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/new (Counter|Gauge|Histogram|Summary)\(\{\s*name: '([a-zA-Z_:][\w:]*)'/g))
      for (const s of seriesOf(m[2]!, m[1]!.toLowerCase() as MetricType)) series.add(s);
    for (const m of text.matchAll(/labelledCounter\([^,]+,\s*\{\s*name: '([a-zA-Z_:][\w:]*)'/g)) series.add(m[1]!);
    for (const m of text.matchAll(/startMetricsServer\(\{[^}]*prefix: '(\w+)'/g)) prefixes.add(m[1]!);
  }
  for (const prefix of prefixes) {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: `${prefix}_` });
    for (const metric of registry.getMetricsAsArray())
      for (const s of seriesOf(metric.name, metric.type as unknown as MetricType)) series.add(s);
  }
  return series;
}

/** Metric names a PromQL expression selects: Fleet's (`fleet_…`) and `up`; string literals (label values) aside. */
export function metricsInExpression(expr: string): string[] {
  const code = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  const names = [...code.matchAll(/(?<![\w:])(fleet_\w+|up)(?![\w:(])/g)].map((m) => m[1]!);
  return [...new Set(names)];
}
