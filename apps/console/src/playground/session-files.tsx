import { useRef, useState } from 'preact/hooks';
import { getJson, request } from '../api/api-client.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { bytes, when } from '../ui/format.js';
import { useLoad } from '../ui/use-load.js';

interface FileList {
  data: { path: string; size: number; modified_at: string }[];
  /** More files are in the session than `data` names (older gateways omit it). */
  has_more?: boolean;
  used_bytes: number;
  quota_bytes: number;
  free_bytes?: number;
}

const filesUrl = (session: string, path?: string) =>
  `/v1/sessions/${encodeURIComponent(session)}/files${path === undefined ? '' : `/${path.split('/').map(encodeURIComponent).join('/')}`}`;

/** The session's files (GET/PUT/DELETE /v1/sessions/{id}/files/…): list, upload, download, delete. */
export function SessionFiles({ session, version }: { session: string; version: number }) {
  const list = useLoad(() => getJson<FileList>(filesUrl(session)), [session, version]);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  const act = async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
      list.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const upload = (e: Event) => {
    e.preventDefault();
    const file = input.current?.files?.[0];
    if (!file) return;
    void act(async () => {
      await request(filesUrl(session, file.name), { method: 'PUT', body: file, headers: { 'content-type': 'application/octet-stream' } });
      if (input.current) input.current.value = '';
    });
  };
  const download = (path: string) =>
    act(async () => {
      const blob = await (await request(filesUrl(session, path))).blob();
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = path.split('/').pop() ?? 'file';
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    });
  const remove = (path: string) => act(() => request(filesUrl(session, path), { method: 'DELETE' }));

  return (
    <section class="card" aria-labelledby="files-h">
      <h2 id="files-h">Files of session “{session}”</h2>
      <ErrorBanner error={error ?? list.error} />
      <form onSubmit={upload} class="row">
        <label for="upload">Upload a file</label>
        <input id="upload" type="file" ref={input} />
        <button type="submit" disabled={busy}>
          Upload
        </button>
        <button type="button" class="quiet" onClick={list.reload}>
          Refresh
        </button>
      </form>
      {list.data && (
        <>
          <p class="note">
            {bytes(list.data.used_bytes)} used of {bytes(list.data.quota_bytes)}
            {list.data.has_more === true && ` · the first ${list.data.data.length.toLocaleString()} files are listed; the session holds more`}
          </p>
          {list.data.data.length === 0 ? (
            <p>No files yet.</p>
          ) : (
            <table data-testid="session-files">
              <thead>
                <tr>
                  <th scope="col">Path</th>
                  <th scope="col">Size</th>
                  <th scope="col">Modified</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((f) => (
                  <tr key={f.path}>
                    <td>{f.path}</td>
                    <td>{bytes(f.size)}</td>
                    <td>{when(f.modified_at)}</td>
                    <td class="row">
                      <button type="button" onClick={() => void download(f.path)} aria-label={`Download ${f.path}`}>
                        Download
                      </button>
                      <button type="button" class="danger" onClick={() => void remove(f.path)} aria-label={`Delete ${f.path}`}>
                        Delete
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
