import { SwitchFaults } from './faults.js';
import type { NvosSimulator } from './simulator.js';

/**
 * The switch part of the simulator's admin API (mounted under /switches by admin.ts):
 *
 *   GET    /switches                       {items:[{id,nvueUrl,ssh:{host,port},hostKeySha256,rebooting}]}
 *   GET    /switches/:id                   state and counters (image, firmware, users, uploads, faults…)
 * GET    /switches/:id/requests          {items:[{at,method,path,status,body?}]} NVUE requests (last 1,000; secrets
 * masked)
 *   DELETE /switches/:id/requests
 * GET    /switches/:id/ssh-requests      {items:[{at,op,user?,path?,bytes?,ok,detail?}]} SSH logins, exec and SFTP
 * operations
 *   DELETE /switches/:id/ssh-requests
 *   GET    /switches/:id/faults            current faults
 *   PUT    /switches/:id/faults            replace faults (body: SwitchFaults, {} clears)
 *   DELETE /switches/:id/faults
 *   GET    /switches/:id/files             {items:[{path,size,sha256?,uploads,bytesReceived}]} under /host
 */
export async function switchRoute(
  nvos: NvosSimulator,
  method: string,
  parts: string[],
  body: () => Promise<unknown>,
): Promise<[number, unknown?]> {
  if (parts.length === 0 && method === 'GET') {
    return [
      200,
      {
        items: nvos.ids().map((id) => ({
          id,
          nvueUrl: nvos.nvueUrl(id),
          ssh: nvos.ssh(id),
          hostKeySha256: nvos.switch(id).hostKey.sha256,
          rebooting: nvos.switch(id).rebooting,
        })),
      },
    ];
  }
  const [id, sub = '', ...rest] = parts;
  if (!id || !nvos.ids().includes(id) || rest.length > 0)
    return [404, { error: `no route ${method} /switches/${parts.join('/')}` }];
  const sw = nvos.switch(id);
  const route = `${method} ${sub}`;
  switch (route) {
    case 'GET ':
      return [
        200,
        {
          id,
          nvueUrl: nvos.nvueUrl(id),
          ssh: nvos.ssh(id),
          hostKeySha256: sw.hostKey.sha256,
          hostPublicKey: sw.hostKey.publicKey,
          rebooting: sw.rebooting,
          nvueUp: sw.nvueUp,
          image: {
            current: sw.image.partitions[sw.image.current],
            next: sw.image.partitions[sw.image.next],
            partitions: sw.image.partitions,
          },
          firmware: sw.firmware,
          users: Object.keys(sw.config.users),
          api: sw.config.api,
          certificates: [...sw.certificates.keys()],
          caCertificates: [...sw.caCertificates.keys()],
          counters: sw.counters,
          peakConcurrentRequests: sw.peakConcurrentRequests,
          faults: sw.faults,
        },
      ];
    case 'GET requests':
      return [200, { items: sw.nvueRequests }];
    case 'DELETE requests':
      sw.clearNvueLog();
      return [204];
    case 'GET ssh-requests':
      return [200, { items: sw.sshRequests }];
    case 'DELETE ssh-requests':
      sw.clearSshLog();
      return [204];
    case 'GET faults':
      return [200, sw.faults];
    case 'DELETE faults':
      sw.setFaults({});
      return [204];
    case 'PUT faults': {
      const parsed = SwitchFaults.safeParse(await body());
      if (!parsed.success)
        return [400, { error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') }];
      sw.setFaults(parsed.data);
      return [200, sw.faults];
    }
    case 'GET files':
      return [
        200,
        {
          items: sw.fs.filesUnder('/host').map(([path, f]) => ({
            path,
            size: f.size,
            sha256: f.sha256,
            uploads: f.uploads,
            bytesReceived: f.bytesReceived,
          })),
        },
      ];
    default:
      return [404, { error: `no route ${method} /switches/${parts.join('/')}` }];
  }
}
