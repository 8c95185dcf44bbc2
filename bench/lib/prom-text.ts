/**
 * The value of one series in a Prometheus text exposition, given as printed (`name` or `name{label="v"}`); 0 when the
 * process has not recorded it yet (prom-client prints a histogram's series only once it has a label set or a sample).
 */
export function promValue(text: string, series: string): number {
  const escaped = series.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`^${escaped} ([^\\s]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}
