import { Link, Outlet } from '@tanstack/react-router';
import { useCaller } from './api/role';
import { useLiveState, type LiveState } from './api/live';
import { signOut } from './api/session';

const liveText: Record<LiveState, string> = {
  open: 'Live',
  connecting: 'Connecting… (polling)',
  down: 'Stream dropped (polling)',
  unavailable: 'Polling',
};

const nav = [
  ['/', 'Overview'],
  ['/sites', 'Sites & racks'],
  ['/devices', 'Devices'],
  ['/jobs', 'Jobs'],
  ['/firmware', 'Firmware'],
  ['/campaigns', 'Campaigns'],
  ['/rma', 'RMA'],
  ['/sla', 'SLA'],
  ['/facility', 'Facility'],
  ['/audit', 'Audit log'],
] as const;

export function Shell() {
  const caller = useCaller().data;
  const live = useLiveState();
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Fleet</span>
        <nav aria-label="Main">
          <ul>
            {nav.map(([to, text]) => (
              <li key={to}>
                <Link to={to} activeOptions={{ exact: to === '/' }} activeProps={{ 'aria-current': 'page' }}>
                  {text}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <span className={`live live-${live}`} role="status" title="How this page stays up to date">
          {liveText[live]}
        </span>
        <span className="who">{caller ? `${caller.name} (${caller.role})` : 'Signed in'}</span>
        <button type="button" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
}
