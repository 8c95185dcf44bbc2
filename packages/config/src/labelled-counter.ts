import { Counter, type Registry } from 'prom-client';

/**
 * A counter with one label, each of whose `values` is exported from 0. A labelled counter prints nothing before its
 * first increment, so that first event would appear as a series already at 1, an increase that `increase()` and the
 * alerts built on it never see. Returns the increment.
 */
export function labelledCounter<V extends string>(
  registry: Registry,
  options: { name: string; help: string; label: string; values: readonly V[] },
): (value: V) => void {
  const { name, help, label, values } = options;
  const counter = new Counter({ name, help, labelNames: [label], registers: [registry] });
  for (const value of values) counter.inc({ [label]: value }, 0);
  return (value) => counter.inc({ [label]: value });
}
