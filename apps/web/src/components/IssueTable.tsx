import { Link } from '@tanstack/react-router';
import type { InventoryIssue } from '@fleet/client';
import { Time } from './Time';

export function IssueTable({ issues }: { issues: readonly InventoryIssue[] }) {
  if (issues.length === 0) return <p className="muted">No open inventory issue.</p>;
  return (
    <table>
      <caption className="visually-hidden">Open inventory issues</caption>
      <thead>
        <tr>
          <th scope="col">Code</th>
          <th scope="col">Object</th>
          <th scope="col">Message</th>
          <th scope="col">Last seen</th>
        </tr>
      </thead>
      <tbody>
        {issues.map((issue) => (
          <tr key={issue.id}>
            <td>
              <code>{issue.code}</code>
            </td>
            <td>
              {issue.device_id ? (
                <Link to="/devices/$deviceId" params={{ deviceId: issue.device_id }}>
                  {issue.object_type} #{issue.netbox_id}
                </Link>
              ) : (
                `${issue.object_type} #${issue.netbox_id}`
              )}
            </td>
            <td>{issue.message}</td>
            <td>
              <Time iso={issue.last_seen_at} compact />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
