import { inspectFwpkgFile } from '@fleet/fwpkg';

// Run alone so process peak RSS is the parser's: prints {mibPerS, peakRssMib, baselineRssMib}.
const path = process.argv[2]!;
const baselineRssMib = process.memoryUsage().rss / 2 ** 20;
const started = process.hrtime.bigint();
const result = await inspectFwpkgFile(path);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
console.log(
  JSON.stringify({
    mibPerS: Number((result.size / 2 ** 20 / seconds).toFixed(1)),
    peakRssMib: Number((process.resourceUsage().maxRSS / 1024).toFixed(1)),
    baselineRssMib: Number(baselineRssMib.toFixed(1)),
  }),
);
