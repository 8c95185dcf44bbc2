/** One request as the hub logged it. */
export interface HubRequestTime {
  /** When it completed, ms since the epoch. */
  at: number;
  status: number;
  ms: number;
}

interface LogLine {
  time?: number;
  msg?: string;
  method?: string;
  url?: string;
  statusCode?: number;
  responseTime?: number;
}

/**
 * The hub's own timing of the requests whose method and URL match, from its pino log: the access line it writes as
 * each request ends, with its method, URL, status and response time.
 */
export function hubRequestTimes(log: string, method: string, url: RegExp): HubRequestTime[] {
  const out: HubRequestTime[] = [];
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    let l: LogLine;
    try {
      l = JSON.parse(line) as LogLine;
    } catch {
      continue;
    }
    if (l.msg !== 'request completed' || l.method !== method || !url.test(l.url ?? '')) continue;
    if (typeof l.responseTime === 'number')
      out.push({ at: l.time ?? 0, status: l.statusCode ?? 0, ms: l.responseTime });
  }
  return out;
}
