import { getRouteApi } from '@tanstack/react-router';
import { usePackage } from '../api/queries';
import { ErrorView, Loading } from '../components/Status';
import { Time } from '../components/Time';
import { formatBytes } from './Firmware';

const route = getRouteApi('/firmware/packages/$packageId');

export function PackageDetail() {
  const { packageId } = route.useParams();
  const pkg = usePackage(packageId);
  if (pkg.isPending) return <Loading what="package" />;
  if (pkg.error) return <ErrorView error={pkg.error} title="The package could not be loaded" />;
  const p = pkg.data;
  return (
    <>
      <h1>{p.file_name}</h1>
      <dl className="facts card">
        <div>
          <dt>Format</dt>
          <dd>{p.format}</dd>
        </div>
        <div>
          <dt>Version</dt>
          <dd>{p.package_version}</dd>
        </div>
        <div>
          <dt>Size</dt>
          <dd>{formatBytes(p.size_bytes)}</dd>
        </div>
        <div>
          <dt>Digest</dt>
          <dd>
            <code>{p.digest}</code>
          </dd>
        </div>
        <div>
          <dt>Uploaded</dt>
          <dd>
            <Time iso={p.created_at} /> by {p.uploaded_by}
          </dd>
        </div>
        {'build_id' in p && (
          <div>
            <dt>NVOS build</dt>
            <dd>{p.build_id}</dd>
          </div>
        )}
        {'header' in p && (
          <div>
            <dt>PLDM header</dt>
            <dd>
              revision {p.header.revision}, UUID <code>{p.header.uuid}</code>
              {p.header.release_date_time && `, released ${p.header.release_date_time}`}
            </dd>
          </div>
        )}
      </dl>
      {'components' in p && (
        <>
          <section aria-labelledby="components" className="card">
            <h2 id="components">Components</h2>
            <table>
              <caption className="visually-hidden">PLDM components</caption>
              <thead>
                <tr>
                  <th scope="col">Index</th>
                  <th scope="col">Identifier</th>
                  <th scope="col">Classification</th>
                  <th scope="col">Version</th>
                  <th scope="col">Size</th>
                  <th scope="col">SHA-256</th>
                </tr>
              </thead>
              <tbody>
                {p.components.map((c) => (
                  <tr key={c.index}>
                    <td className="num">{c.index}</td>
                    <td>
                      <code>0x{c.identifier.toString(16).padStart(4, '0')}</code>
                    </td>
                    <td className="num">{c.classification}</td>
                    <td>{c.version}</td>
                    <td className="num">{formatBytes(c.size)}</td>
                    <td>
                      <code className="hash">{c.sha256}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <section aria-labelledby="devices" className="card">
            <h2 id="devices">Device records (descriptors)</h2>
            <ul>
              {p.devices.map((d, i) => (
                <li key={i}>
                  Image set {d.image_set_version}; components {d.applicable_components.join(', ')}; descriptors:{' '}
                  {d.descriptors.map((x) => `type ${x.type} = ${x.data}`).join('; ')}
                </li>
              ))}
            </ul>
          </section>
        </>
      )}
    </>
  );
}
