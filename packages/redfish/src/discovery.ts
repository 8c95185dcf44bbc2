import type { Link, RedfishClient, ServiceRoot } from './client.js';
import { serviceRootUri } from './client.js';
import { RedfishError } from './errors.js';

interface CollectionPage {
  Members?: Link[];
  'Members@odata.count'?: number;
  'Members@odata.nextLink'?: string;
}

export interface CollectionMembers {
  /** Member URIs in BMC order, each once. */
  members: string[];
  /** Inconsistencies in what the BMC listed (duplicates, a count that does not match). */
  warnings: string[];
}

/**
 * The members of a collection, following nextLink pages. BMCs do list members twice
 * (GH200 FirmwareInventory lists HGX_FW_FPGA_0 twice; the DMTF power shelf lists Bay3
 * twice and omits Bay2): duplicates are dropped and reported, never fatal.
 */
export async function readCollection(client: RedfishClient, uri: string): Promise<CollectionMembers> {
  const { members, warnings } = await readPages(client, uri, uri, false);
  return { members, warnings };
}

export interface CollectionWithBodies extends CollectionMembers {
  /** A member's body: the one the BMC sent with the listing, else read now. */
  read<T>(member: string): Promise<T>;
}

/**
 * A collection whose members' bodies are all wanted. Where the service root advertises `$expand=.`
 * (ProtocolFeaturesSupported.ExpandQuery.NoLinks), one request brings them all instead of one per member (23 on the
 * simulated GB200 tray's firmware inventory). Members are read one by one on a BMC that does not advertise it, that
 * ignores it, or whose expanded answer fails or does not hold up (then until the client is invalidated, with a
 * warning); so is any member whose inline body is not whole (bmcweb puts a member's error in its place).
 */
export async function readCollectionWithBodies(client: RedfishClient, uri: string): Promise<CollectionWithBodies> {
  const { inline, ...listed } = (await expandedPages(client, uri)) ?? (await readPages(client, uri, uri, false));
  return {
    ...listed,
    read: async <T>(member: string) => (inline.get(member) as T | undefined) ?? client.get<T>(member),
  };
}

/** The query an expanded collection read adds to the collection's URI. */
export const expandQuery = '$expand=.';
const expandOff = 'expand-off';

async function expandedPages(client: RedfishClient, uri: string): Promise<Pages | undefined> {
  if (client.isCached(expandOff)) return undefined;
  if ((await client.root()).ProtocolFeaturesSupported?.ExpandQuery?.NoLinks !== true) return undefined;
  try {
    return await readPages(client, uri, `${uri}${uri.includes('?') ? '&' : '?'}${expandQuery}`, true);
  } catch (err) {
    if (!expansionFailed(err)) throw err;
    void client.cached(expandOff, () => Promise.resolve(true));
    const pages = await readPages(client, uri, uri, false);
    const why = err.status ? `HTTP ${err.status}` : err.code;
    pages.warnings.push(`${uri}: $expand advertised but failed (${why}); members read one by one`);
    return pages;
  }
}

/**
 * An expanded read that a plain one may well survive: refused (400, 405, 414, 501), an internal error, a timeout, an
 * answer that does not hold up. A 404 or 503 goes to the caller, whose re-discovery they mean; so does what no plain
 * read survives either (authentication, a connection refused, cancellation).
 */
function expansionFailed(err: unknown): err is RedfishError {
  if (!(err instanceof RedfishError)) return false;
  if (err.code === 'Timeout' || err.code === 'Protocol') return true;
  const status = err.status ?? 0;
  return [400, 405, 414, 501].includes(status) || (status >= 500 && status !== 503);
}

/**
 * A member sent whole in an expanded listing: a path on this BMC, its type and Id, no error in its place. Anything
 * else is read with a GET of its own, which checks it as any resource.
 */
export function inlineBody(m: unknown): Record<string, unknown> | undefined {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return undefined;
  const b = m as Record<string, unknown>;
  const id = b['@odata.id'];
  if (typeof id !== 'string' || !id.startsWith('/') || id.startsWith('//')) return undefined;
  if ('error' in b || typeof b['@odata.type'] !== 'string' || typeof b['Id'] !== 'string') return undefined;
  return b;
}

interface Pages extends CollectionMembers {
  /** Whole member bodies an expanded listing sent, by member URI. */
  inline: Map<string, unknown>;
}

async function readPages(client: RedfishClient, uri: string, firstPage: string, expanded: boolean): Promise<Pages> {
  const seen = new Set<string>();
  const inline = new Map<string, unknown>();
  const warnings: string[] = [];
  let listed = 0;
  let declared: number | undefined;
  const visited = new Set<string>();
  for (let page: string | undefined = firstPage; page && !visited.has(page);) {
    visited.add(page);
    const body: CollectionPage = await client.get<CollectionPage>(page);
    const count = body['Members@odata.count'];
    declared ??= typeof count === 'number' ? count : undefined;
    const listedHere: unknown = body.Members ?? [];
    if (!Array.isArray(listedHere))
      throw new RedfishError('Protocol', client.bmc, page, `Members is ${typeof listedHere}, not a list`);
    // An expanded answer must be the collection asked for, whole: otherwise the plain listing is read instead.
    const self: unknown = (body as { '@odata.id'?: unknown })['@odata.id'];
    const other = self !== undefined && (typeof self !== 'string' || trimSlash(self) !== trimSlash(uri));
    if (expanded && page === firstPage && (!Array.isArray(body.Members) || other))
      throw new RedfishError('Protocol', client.bmc, page, 'expanded answer is not the collection with its Members');
    for (const m of listedHere as (Link | null | undefined)[]) {
      const id = m?.['@odata.id'];
      if (typeof id !== 'string') {
        if (expanded) throw new RedfishError('Protocol', client.bmc, page, 'expanded member without @odata.id');
        continue;
      }
      listed++;
      const key = trimSlash(id);
      if (seen.has(key)) warnings.push(`${uri}: member ${key} listed more than once`);
      seen.add(key);
      const whole = expanded ? inlineBody(m) : undefined;
      if (whole) inline.set(key, whole);
    }
    const next: unknown = body['Members@odata.nextLink'];
    page = typeof next === 'string' ? next : undefined;
  }
  if (declared !== undefined && declared !== seen.size) {
    warnings.push(
      `${uri}: Members@odata.count is ${declared} but ${seen.size} distinct members are listed (${listed} entries)`,
    );
  }
  return { members: [...seen], warnings, inline };
}

/** A link named in the service root, or FailedPrecondition if this BMC does not offer it. */
export async function rootLink(client: RedfishClient, name: keyof ServiceRoot & string): Promise<string> {
  const uri = linkOf(await client.root(), name);
  if (!uri)
    throw new RedfishError('FailedPrecondition', client.bmc, serviceRootUri, `service root has no ${name} link`);
  return uri;
}

/** The @odata.id of a navigation property, if present. */
export function linkOf(resource: unknown, name: string): string | undefined {
  const v = (resource as Record<string, Link | undefined> | undefined)?.[name]?.['@odata.id'];
  return typeof v === 'string' ? trimSlash(v) : undefined;
}

/**
 * The member of a collection whose Id is `id`. Member URIs usually end in the Id, which
 * saves reading every member; otherwise each member is read and its Id compared.
 */
export async function findMember(
  client: RedfishClient,
  collectionUri: string,
  id: string,
): Promise<string | undefined> {
  return memberWithId(client, (await readCollection(client, collectionUri)).members, id);
}

/** The one of `members` whose Id is `id`: by path first, else by reading each member. */
export async function memberWithId(
  client: RedfishClient,
  members: readonly string[],
  id: string,
): Promise<string | undefined> {
  const byPath = members.find((m) => m.endsWith(`/${id}`));
  if (byPath) return byPath;
  for (const m of members) {
    if ((await client.get<{ Id?: string }>(m)).Id === id) return m;
  }
  return undefined;
}

/**
 * URI of member `id` of a collection named in the service root (Chassis, Managers), found by
 * discovery and cached until the client is invalidated; NotFound when the BMC lists no such member.
 */
export function memberUri(
  client: RedfishClient,
  collection: 'Chassis' | 'Managers' | 'Systems',
  id: string,
): Promise<string> {
  return client.link(`${collection}:${id}`, async () => {
    const collectionUri = await rootLink(client, collection);
    const found = await findMember(client, collectionUri, id);
    if (!found) throw new RedfishError('NotFound', client.bmc, collectionUri, `no ${collection} member ${id}`);
    return found;
  });
}

/** Some services write links with a trailing slash (`/redfish/v1/`); compare and cache without it. */
export function trimSlash(uri: string): string {
  return uri.length > 1 && uri.endsWith('/') ? uri.slice(0, -1) : uri;
}
