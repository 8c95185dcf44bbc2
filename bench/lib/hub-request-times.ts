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
  reqId?: string;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
}

/**
 * The hub's own timing of the requests whose method and URL match, from its pino log (Fastify logs each request's
 * arrival with its URL and its completion with the response time, joined by the request id).
 */
export function hubRequestTimes(log: string, method: string, url: RegExp): HubRequestTime[] {
  const wanted = new Set<string>();
  const out: HubRequestTime[] = [];
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    let l: LogLine;
    try {
      l = JSON.parse(line) as LogLine;
    } catch {
      continue;
    }
    if (!l.reqId) continue;
    if (l.msg === 'incoming request' && l.req?.method === method && url.test(l.req.url ?? '')) wanted.add(l.reqId);
    else if (l.msg === 'request completed' && wanted.delete(l.reqId) && typeof l.responseTime === 'number')
      out.push({ at: l.time ?? 0, status: l.res?.statusCode ?? 0, ms: l.responseTime });
  }
  return out;
}
