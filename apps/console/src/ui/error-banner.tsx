import { ApiFailure } from '../api/api-client.js';

/** An error as the gateway stated it (OpenAI envelope: message, code, type, param, status). */
export function ErrorBanner({ error }: { error: unknown }) {
  if (!error) return null;
  const f = error instanceof ApiFailure ? error : undefined;
  return (
    <div class="error" role="alert">
      <strong>{f?.message ?? (error instanceof Error ? error.message : typeof error === 'string' ? error : 'Something failed.')}</strong>
      {f && (
        <span class="error-meta">
          {f.status ? ` HTTP ${f.status}` : ''}
          {f.code ? ` · code ${f.code}` : ''}
          {f.type ? ` · ${f.type}` : ''}
          {f.param ? ` · param ${f.param}` : ''}
        </span>
      )}
    </div>
  );
}
