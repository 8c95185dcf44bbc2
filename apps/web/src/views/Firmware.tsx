import { useId, useRef, useState, type DragEvent } from 'react';
import { Link } from '@tanstack/react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { FirmwarePackage } from '@fleet/client';
import { useComplianceSummary, useManifests, usePackages, useSites } from '../api/queries';
import { useCan } from '../api/role';
import { uploadPackage, type UploadProgress } from '../api/upload';
import { CountsFromMap } from '../components/Counts';
import { ErrorView, Loading } from '../components/Status';
import { Time } from '../components/Time';

export function Firmware() {
  const can = useCan('operator');
  return (
    <>
      <h1>Firmware</h1>
      {can && <Upload />}
      <Packages />
      <Manifests />
      <Compliance />
    </>
  );
}

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function Upload() {
  const queryClient = useQueryClient();
  const [format, setFormat] = useState<'pldm' | 'nvos'>('pldm');
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const ids = { file: useId(), format: useId(), progress: useId() };
  const upload = useMutation({
    mutationFn: (file: File) => uploadPackage(file, format, setProgress),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['packages'] }),
  });
  const start = (file: File | undefined) => {
    if (!file) return;
    setProgress({ loaded: 0, total: file.size });
    upload.mutate(file);
    // Choosing the same file again (a retry) must fire onChange again.
    if (input.current) input.current.value = '';
  };
  const drop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    start(e.dataTransfer.files[0]);
  };
  const percent = progress && progress.total ? Math.round((progress.loaded / progress.total) * 100) : 0;
  return (
    <section aria-labelledby="upload" className="card">
      <h2 id="upload">Upload a package</h2>
      <div
        className={`dropzone${dragging ? ' dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={drop}
      >
        <p>Drop a PLDM package (.fwpkg) or an NVOS image here, or choose one:</p>
        <p className="filters">
          <label htmlFor={ids.format}>Format</label>
          <select id={ids.format} value={format} onChange={(e) => setFormat(e.target.value as 'pldm' | 'nvos')}>
            <option value="pldm">PLDM firmware package</option>
            <option value="nvos">NVOS switch image</option>
          </select>
          <label htmlFor={ids.file}>Package file</label>
          <input
            ref={input}
            id={ids.file}
            type="file"
            disabled={upload.isPending}
            onChange={(e) => start(e.target.files?.[0])}
          />
        </p>
      </div>
      {progress && (
        <p>
          <label htmlFor={ids.progress}>
            {upload.isPending
              ? 'Uploading'
              : upload.isSuccess
                ? 'Uploaded'
                : progress.loaded >= progress.total
                  ? 'Sent'
                  : 'Upload stopped at'}{' '}
            {formatBytes(progress.loaded)} of {formatBytes(progress.total)} ({percent} %)
          </label>
          <progress id={ids.progress} max={progress.total || 1} value={progress.loaded} />
        </p>
      )}
      {upload.isSuccess && (
        <p role="status">
          Stored{' '}
          <Link to="/firmware/packages/$packageId" params={{ packageId: upload.data.id }}>
            {upload.data.file_name}
          </Link>{' '}
          (version {upload.data.package_version}).
        </p>
      )}
      <ErrorView error={upload.error} title="The hub refused the package" />
    </section>
  );
}

function Packages() {
  const packages = usePackages();
  return (
    <section aria-labelledby="packages" className="card">
      <h2 id="packages">Packages</h2>
      {packages.isPending && <Loading what="packages" />}
      <ErrorView error={packages.error} />
      {packages.data && <PackageTable packages={packages.data.items} />}
    </section>
  );
}

function PackageTable({ packages }: { packages: readonly FirmwarePackage[] }) {
  if (packages.length === 0) return <p className="muted">No package uploaded yet.</p>;
  return (
    <table>
      <caption className="visually-hidden">Firmware packages, newest first</caption>
      <thead>
        <tr>
          <th scope="col">File</th>
          <th scope="col">Format</th>
          <th scope="col">Version</th>
          <th scope="col">Size</th>
          <th scope="col">Uploaded</th>
        </tr>
      </thead>
      <tbody>
        {packages.map((p) => (
          <tr key={p.id}>
            <td>
              <Link to="/firmware/packages/$packageId" params={{ packageId: p.id }}>
                {p.file_name}
              </Link>
            </td>
            <td>{p.format}</td>
            <td>{p.package_version}</td>
            <td className="num">{formatBytes(p.size_bytes)}</td>
            <td>
              <Time iso={p.created_at} compact /> by {p.uploaded_by}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Manifests() {
  const manifests = useManifests();
  return (
    <section aria-labelledby="manifests" className="card">
      <h2 id="manifests">Manifests</h2>
      {manifests.isPending && <Loading what="manifests" />}
      <ErrorView error={manifests.error} />
      {manifests.data && manifests.data.items.length === 0 && <p className="muted">No manifest yet.</p>}
      {manifests.data && manifests.data.items.length > 0 && (
        <table>
          <caption className="visually-hidden">Firmware manifests</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Hardware type</th>
              <th scope="col">Revision</th>
              <th scope="col">Components</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {manifests.data.items.map((m) => (
              <tr key={m.id}>
                <td>
                  {m.name} {m.default && <span className="badge tone-ok">default</span>}
                </td>
                <td>{m.hardware_type}</td>
                <td className="num">{m.revision}</td>
                <td>
                  {m.steps
                    .flatMap((s) => s.components)
                    .map((c) => `${c.id} ${c.version}`)
                    .join(', ')}
                </td>
                <td>
                  <Time iso={m.updated_at} compact />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Compliance() {
  const sites = useSites();
  return (
    <section aria-labelledby="compliance" className="card">
      <h2 id="compliance">Compliance by site</h2>
      <div className="grid4">
        {sites.data?.items.map((s) => (
          <SiteCompliance key={s.id} siteId={s.id} />
        ))}
      </div>
    </section>
  );
}

function SiteCompliance({ siteId }: { siteId: string }) {
  const summary = useComplianceSummary(siteId);
  if (summary.isPending) return <Loading what={`compliance of ${siteId}`} />;
  if (summary.error) return <ErrorView error={summary.error} />;
  return <CountsFromMap caption={`${siteId} (${summary.data.total} devices)`} counts={summary.data.by_status} badge />;
}
