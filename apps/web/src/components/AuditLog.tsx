import { Link } from '@tanstack/react-router';
import { useAuditLog, type AuditEntry, type AuditFilter } from '../api/audit-queries';
import { Badge, ErrorView, Loading } from './Status';
import { Time } from './Time';

const short = (id: string) => id.slice(0, 8);
const isCampaignAction = (action: string) => action === 'firmware.campaign' || action.startsWith('firmware.campaign.');

/** A job id as a link: campaigns (their job id is the campaign id) to their own page, other jobs to theirs. */
function JobLink({ id, campaign }: { id: string; campaign: boolean }) {
  return campaign ? (
    <Link to="/campaigns/$campaignId" params={{ campaignId: id }} title={id}>
      campaign {short(id)}
    </Link>
  ) : (
    <Link to="/jobs/$jobId" params={{ jobId: id }} title={id}>
      job {short(id)}
    </Link>
  );
}

/**
 * What a row acted on: `kind/id` as a link to that object's page when the console has one. Refused requests record
 * the request path instead, shown as it is.
 */
export function AuditTarget({ entry }: { entry: AuditEntry }) {
  const target = entry.target;
  if (!target) return <span className="muted">—</span>;
  const [, kind, id] = /^([a-z_]+)\/([^/\s]+)$/.exec(target) ?? [];
  if (!kind || !id) return <code>{target}</code>;
  switch (kind) {
    case 'device':
      return (
        <Link to="/devices/$deviceId" params={{ deviceId: id }} title={target}>
          device {short(id)}
        </Link>
      );
    case 'job':
      return <JobLink id={id} campaign={isCampaignAction(entry.action)} />;
    case 'rack':
      return (
        <Link to="/racks/$rackId" params={{ rackId: id }} title={target}>
          rack {short(id)}
        </Link>
      );
    case 'site':
      return (
        <Link to="/sites" search={{ site: id }}>
          site {id}
        </Link>
      );
    case 'firmware_package':
      return (
        <Link to="/firmware/packages/$packageId" params={{ packageId: id }} title={target}>
          package {short(id)}
        </Link>
      );
    default:
      return <code>{target}</code>;
  }
}

function Details({ entry }: { entry: AuditEntry }) {
  // The job an accepted request started, unless the target already links to it.
  const job = entry.job_id && entry.target !== `job/${entry.job_id}` ? entry.job_id : null;
  return (
    <>
      {job && (
        <div>
          <JobLink id={job} campaign={isCampaignAction(entry.action)} />
        </div>
      )}
      {Object.entries(entry.details ?? {}).map(([key, value]) => (
        <div key={key}>
          {key}: <code>{typeof value === 'string' ? value : JSON.stringify(value)}</code>
        </div>
      ))}
      <div className="muted">
        request <code title="The request id in the hub's logs">{entry.request_id}</code>
      </div>
    </>
  );
}

export function AuditTable({ entries, caption }: { entries: readonly AuditEntry[]; caption: string }) {
  return (
    <table className="audit">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Time</th>
          <th scope="col">Actor</th>
          <th scope="col">Action</th>
          <th scope="col">Outcome</th>
          <th scope="col">Target</th>
          <th scope="col">Details</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((e) => (
          <tr key={e.id}>
            <td>
              <Time iso={e.at} />
            </td>
            <td>
              {e.actor}
              {e.role && <span className="muted"> ({e.role})</span>}
            </td>
            <td>
              <code>{e.action}</code>
            </td>
            <td>
              <Badge value={e.outcome} /> <span className="muted">{e.status_code}</span>
            </td>
            <td>
              <AuditTarget entry={e} />
            </td>
            <td>
              <Details entry={e} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The rows matching `filter`, newest first, with "Load more" while the hub has older ones. */
export function AuditLog({ filter, caption, empty }: { filter: AuditFilter; caption: string; empty: string }) {
  const log = useAuditLog(filter);
  if (log.isPending) return <Loading what="audit log" />;
  const entries = log.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <>
      <ErrorView error={log.error} title="The audit log could not be loaded" />
      {log.data && entries.length === 0 && <p className="muted">{empty}</p>}
      {entries.length > 0 && (
        <AuditTable entries={entries} caption={`${caption} (${entries.length}${log.hasNextPage ? '+' : ''})`} />
      )}
      {log.hasNextPage && (
        <p>
          <button type="button" onClick={() => void log.fetchNextPage()} disabled={log.isFetchingNextPage}>
            {log.isFetchingNextPage ? 'Loading more…' : 'Load more'}
          </button>
        </p>
      )}
    </>
  );
}
