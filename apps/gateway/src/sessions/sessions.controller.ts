import { Controller, Delete, Get, Param, Put, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { listQueryOf } from '../openai/list-query.js';
import { RequestCaller, type Caller } from '../auth/identity.js';
import { checkSessionId } from './session-id.js';
import { SessionFilesService } from './session-files.service.js';

/**
 * Sandbox sessions (X-Drael-Session) and their files, so clients can bring files in and take
 * results out: GET /v1/sessions lists the account's sessions (an account holds a bounded number),
 * GET /v1/sessions/{id}/files lists a session's files, GET/PUT/DELETE /v1/sessions/{id}/files/{path} move one
 * file, DELETE /v1/sessions/{id} deletes the session with all its files (an account holds a
 * bounded number of sessions: this is how a client frees one). Bodies are the file's raw bytes;
 * a GET sends the whole file, however large (a generated image can be several MB), an upload is
 * at most BODY_LIMIT_BYTES (32 MiB unless configured).
 */
@Controller('v1/sessions')
export class SessionsController {
  constructor(private readonly files: SessionFilesService) {}

  @Get()
  listSessions(@Query() query: unknown, @RequestCaller() caller: Caller) {
    const page = listQueryOf(query);
    if (page.after !== undefined) checkSessionId(page.after, 'after');
    return this.files.listSessions(caller, page);
  }

  @Get(':id/files')
  list(@Param('id') id: string, @RequestCaller() caller: Caller) {
    return this.files.list(caller, checkSessionId(id, 'id'));
  }

  @Get(':id/files/*')
  async read(@Param('id') id: string, @RequestCaller() caller: Caller, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const path = filePathOf(req);
    const file = await this.files.open(caller, checkSessionId(id, 'id'), path);
    // A download, never a page: what code or a model wrote is not rendered by a browser (nosniff,
    // attachment) nor kept by any cache.
    void reply
      .header('content-type', 'application/octet-stream')
      .header('content-length', String(file.size))
      .header('x-drael-file-size', String(file.size))
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-store')
      .header('content-disposition', attachmentOf(path))
      .send(file.body);
  }

  @Put(':id/files/*')
  write(@Param('id') id: string, @RequestCaller() caller: Caller, @Req() req: FastifyRequest) {
    // SessionsModule makes every upload arrive as raw bytes, whatever its Content-Type; no body is an empty file.
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    return this.files.write(caller, checkSessionId(id, 'id'), filePathOf(req), body);
  }

  @Delete(':id')
  deleteSession(@Param('id') id: string, @RequestCaller() caller: Caller) {
    return this.files.deleteSession(caller, checkSessionId(id, 'id'));
  }

  @Delete(':id/files/*')
  delete(@Param('id') id: string, @RequestCaller() caller: Caller, @Req() req: FastifyRequest) {
    return this.files.delete(caller, checkSessionId(id, 'id'), filePathOf(req));
  }
}

/** `Content-Disposition: attachment` naming the file (its last component; RFC 6266's filename* for any character, an ASCII fallback). */
function attachmentOf(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/** The file path after /files/, percent-decoded (the sandbox checks it stays inside the session). */
function filePathOf(req: FastifyRequest): string {
  const url = req.url.split('?')[0] ?? '';
  const at = url.indexOf('/files/');
  const raw = at === -1 ? '' : url.slice(at + '/files/'.length);
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    throw new ApiError('invalid_path', 'The file path is not valid percent-encoding', 'path');
  }
  if (path === '') throw new ApiError('invalid_path', 'A file path is required after /files/', 'path');
  return path;
}
