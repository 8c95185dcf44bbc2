import { ApiError, type FirmwarePackage } from '@fleet/client';
import { authHeaders } from './client';

export interface UploadProgress {
  loaded: number;
  total: number;
}

/**
 * POST /v1/firmware/packages with the file as the raw body. XMLHttpRequest rather than fetch: only it reports
 * upload progress, which a multi-GB package needs.
 */
export function uploadPackage(
  file: File,
  format: 'pldm' | 'nvos',
  onProgress: (p: UploadProgress) => void,
  signal?: AbortSignal,
): Promise<FirmwarePackage> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    const query = new URLSearchParams({ file_name: file.name, format });
    xhr.open('POST', `/v1/firmware/packages?${query}`);
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.responseType = 'text';
    xhr.upload.onprogress = (e) => onProgress({ loaded: e.loaded, total: e.lengthComputable ? e.total : file.size });
    // The last progress event may come before the last bytes left (small files may see none at all).
    xhr.upload.onload = () => onProgress({ loaded: file.size, total: file.size });
    xhr.onerror = () => reject(new Error('the upload failed: the hub could not be reached'));
    xhr.onabort = () => reject(new Error('the upload was cancelled'));
    xhr.onload = () => {
      let body: unknown = xhr.responseText;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // not JSON: kept as text for the error message
      }
      if (xhr.status >= 200 && xhr.status < 300) return resolve(body as FirmwarePackage);
      reject(ApiError.from(new Response(null, { status: xhr.status, statusText: xhr.statusText }), body));
    };
    signal?.addEventListener('abort', () => xhr.abort());
    xhr.send(file);
  });
}
