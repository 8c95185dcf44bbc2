import { redfishError } from './errors.js';
import { isObject } from './http-util.js';

/**
 * DSP0266 §7.3.4 `$expand`, as OpenBMC's bmcweb serves it (built with its Redfish query support) and the DMTF
 * mockups advertise: `*` expands every hyperlink, `.` those outside `Links`, `~` those inside `Links`;
 * `$levels` says how deep. A hyperlink is an object holding only `@odata.id`; one the service cannot read stays.
 */
export interface ExpandQuery {
  mode: '*' | '.' | '~';
  levels: number;
}

/** What the service root advertises; deeper requests are refused with QueryParameterOutOfRange. */
export const MAX_EXPAND_LEVELS = 3;

export const expandQueryFeatures = (supported: boolean) =>
  supported
    ? { ExpandAll: true, Levels: true, MaxLevels: MAX_EXPAND_LEVELS, Links: true, NoLinks: true }
    : { ExpandAll: false, Levels: false, Links: false, NoLinks: false };

const EXPAND = /^([*.~])(?:\(\$levels=(\d{1,3})\))?$/;

/** The request's `$expand`, if any; a malformed or too deep one is a 400 naming the parameter. */
export function expandQueryOf(url: string): ExpandQuery | undefined {
  const q = url.indexOf('?');
  const value = q < 0 ? null : new URLSearchParams(url.slice(q + 1)).get('$expand');
  if (value === null) return undefined;
  const m = EXPAND.exec(value);
  if (!m) throw redfishError(400, 'QueryParameterValueFormatError', [value, '$expand']);
  const levels = m[2] === undefined ? 1 : Number(m[2]);
  if (levels < 1 || levels > MAX_EXPAND_LEVELS)
    throw redfishError(400, 'QueryParameterOutOfRange', [value, '$expand', `$levels 1 to ${MAX_EXPAND_LEVELS}`]);
  return { mode: m[1] as ExpandQuery['mode'], levels };
}

/** `body` with the hyperlinks the query names replaced by the resources `read` finds, `levels` deep. */
export function expandResource(
  body: Record<string, unknown>,
  query: ExpandQuery,
  read: (uri: string) => Record<string, unknown> | undefined,
): Record<string, unknown> {
  const wanted = (inLinks: boolean) => query.mode === '*' || (query.mode === '~') === inLinks;
  const walk = (value: unknown, inLinks: boolean, levels: number): unknown => {
    if (Array.isArray(value)) return value.map((v) => walk(v, inLinks, levels));
    if (!isObject(value)) return value;
    const keys = Object.keys(value);
    if (keys.length === 1 && typeof value['@odata.id'] === 'string') {
      if (!wanted(inLinks)) return value;
      const target = read(value['@odata.id'].replace(/\/+$/, ''));
      if (!target) return value;
      return levels > 1 ? walk(target, false, levels - 1) : target;
    }
    return Object.fromEntries(keys.map((k) => [k, walk(value[k], inLinks || k === 'Links', levels)]));
  };
  return walk(body, false, query.levels) as Record<string, unknown>;
}
